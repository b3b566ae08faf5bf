/// How a walk over a structure ended, shared by the probes so `identify` (on a prefix) and
/// `inspect` (on the whole file) can use one walker and read the ending differently.
enum ProbeWalk {
  /// The structure was checked to its end.
  case complete(ProbeReport)
  /// The bytes ran out while the structure was still consistent; the detail says where.
  case cut(ProbeReport, String)
  /// The structure is wrong; the detail says how.
  case invalid(String)

  /// For `identify`: a prefix that ends mid-structure is fine, a wrong structure is not.
  var identified: ProbeReport? {
    switch self {
    case .complete(let report), .cut(let report, _): report
    case .invalid: nil
    }
  }

  /// For `inspect`: running out of bytes means the file is truncated.
  var inspected: Result<ProbeReport, ProbeProblem> {
    switch self {
    case .complete(let report): .success(report)
    case .cut(_, let detail): .failure(.truncated(detail))
    case .invalid(let detail): .failure(.malformed(detail))
    }
  }
}

/// Loop bounds shared by the walkers, on top of "every step moves forward in the file".
enum ProbeLimits {
  /// Most segments, chunks, boxes, blocks or packets a walk visits before giving up.
  static let maxSteps = 4_000_000
  /// Most children one ISO BMFF container box may have (each is held in an array while its
  /// parent is parsed, so this bounds memory too).
  static let maxChildren = 10_000
  /// Most tracks an ISO BMFF movie's report is built from (further tracks are ignored).
  static let maxTracks = 256
  /// Most track IDs the fragment tally keeps sums for.
  static let maxFragmentTracks = 64
  /// Most IFDs a TIFF chain may have.
  static let maxTIFFDirectories = 4_096
}
