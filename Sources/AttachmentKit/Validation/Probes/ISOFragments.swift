/// Sums the sample durations of a fragmented movie's moof boxes, per track, so a duration can
/// be given when neither mvhd nor mehd has one.
///
/// Samples whose duration is in no tfhd nor trun are counted separately and priced with the
/// trex default once the moov is known (moov normally comes first, but need not).
struct ISOFragmentTally {
  /// Explicit durations (trun per-sample, or tfhd default) summed by track ID.
  private(set) var durations: [UInt32: UInt64] = [:]
  /// Samples that take the trex default duration, by track ID.
  private(set) var defaultedSamples: [UInt32: UInt64] = [:]
  /// moof boxes seen.
  private(set) var fragments = 0

  /// Box types read here.
  private static let traf = ProbeMath.code("traf")
  private static let tfhd = ProbeMath.code("tfhd")
  private static let trun = ProbeMath.code("trun")

  /// Adds one moof (inside the readable bytes). Fails malformed when a traf has no tfhd or a
  /// tfhd / trun is too small for the fields its flags announce.
  mutating func add(_ reader: ByteReader, moof: ISOBox) -> ProbeProblem? {
    fragments += 1
    switch ISOBox.children(reader, of: moof) {
    case .failure(let problem): return problem
    case .success(let boxes):
      for box in boxes where box.type == Self.traf {
        if let problem = addTrackFragment(reader, box) { return problem }
      }
      return nil
    }
  }

  /// The total duration of `track` in its own timescale units, nil when there is nothing or it
  /// overflows.
  func total(for track: UInt32, defaultDuration: UInt32?) -> UInt64? {
    let explicit = durations[track] ?? 0
    let defaulted = defaultedSamples[track] ?? 0
    let (priced, overflow) = defaulted.multipliedReportingOverflow(by: UInt64(defaultDuration ?? 0))
    guard !overflow else { return nil }
    let (sum, overflow2) = explicit.addingReportingOverflow(priced)
    return overflow2 || sum == 0 ? nil : sum
  }

  /// One traf: the tfhd default duration, then each trun.
  private mutating func addTrackFragment(_ reader: ByteReader, _ traf: ISOBox) -> ProbeProblem? {
    guard case .success(let boxes) = ISOBox.children(reader, of: traf),
      let header = boxes.first(where: { $0.type == Self.tfhd }), header.payloadSize >= 8,
      let flags = reader.u24be(header.payload + 1), let track = reader.u32be(header.payload + 4)
    else { return .malformed("traf has no valid tfhd") }
    var cursor = header.payload + 8
    if flags & 0x01 != 0 { cursor += 8 }
    if flags & 0x02 != 0 { cursor += 4 }
    var fallback: UInt32?
    if flags & 0x08 != 0 {
      guard cursor + 4 <= header.end, let value = reader.u32be(cursor) else {
        return .malformed("tfhd is too small for its flags")
      }
      fallback = value
    }
    for run in boxes where run.type == Self.trun {
      if let problem = addRun(reader, run, track: track, fallback: fallback) { return problem }
    }
    return nil
  }

  /// One trun: per-sample durations when flagged, else `fallback` or the trex default.
  private mutating func addRun(_ reader: ByteReader, _ run: ISOBox, track: UInt32, fallback: UInt32?)
    -> ProbeProblem?
  {
    guard run.payloadSize >= 8, let flags = reader.u24be(run.payload + 1),
      let samples = reader.u32be(run.payload + 4)
    else { return .malformed("trun is too small") }
    var cursor = run.payload + 8
    if flags & 0x001 != 0 { cursor += 4 }
    if flags & 0x004 != 0 { cursor += 4 }
    let record = 4 * (flags & 0xF00).nonzeroBitCount
    guard let size = ProbeMath.multiply(Int(samples), record), cursor + size <= run.end else {
      return .malformed("trun holds fewer samples than it declares")
    }
    if flags & 0x100 != 0 {
      var sum: UInt64 = 0
      for index in 0..<Int(samples) {
        guard let value = reader.u32be(cursor + index * record) else {
          return .truncated("trun is cut off")
        }
        sum += UInt64(value)  // at most 2^32 samples of 2^32 - 1: cannot overflow
      }
      Self.add(sum, to: &durations, track)
    } else if let fallback {
      Self.add(UInt64(samples) * UInt64(fallback), to: &durations, track)
    } else {
      Self.add(UInt64(samples), to: &defaultedSamples, track)
    }
    return nil
  }

  /// Adds `value` to `table[track]`, saturating instead of overflowing; a new track beyond
  /// `ProbeLimits.maxFragmentTracks` is ignored.
  private static func add(_ value: UInt64, to table: inout [UInt32: UInt64], _ track: UInt32) {
    guard table[track] != nil || table.count < ProbeLimits.maxFragmentTracks else { return }
    let (sum, overflow) = (table[track] ?? 0).addingReportingOverflow(value)
    table[track] = overflow ? UInt64.max : sum
  }
}
