/// Two commands timed against each other: each run a new process, alternating which goes
/// first, after one warm-up round (it fills the page cache); medians of the rest.
enum Alternation {
  /// The medians of one comparison: wall time in milliseconds, peak RSS in bytes.
  struct Medians {
    var oursMilliseconds: Double
    var theirsMilliseconds: Double
    var oursPeakBytes: Double
    var theirsPeakBytes: Double
  }

  /// Runs `ours` and `theirs` `repetitions` times each (plus the warm-up round).
  /// - Throws: ``BenchError`` when a run exits non-zero.
  static func measure(ours: [String], theirs: [String], repetitions: Int) throws -> Medians {
    var times: (ours: [Duration], theirs: [Duration]) = ([], [])
    var peaks: (ours: [Double], theirs: [Double]) = ([], [])
    for repetition in 0..<(repetitions + 1) {
      for isOurs in repetition % 2 == 0 ? [true, false] : [false, true] {
        let arguments = isOurs ? ours : theirs
        let run = try Subprocess.measurePeak(arguments)
        guard run.status == 0 else {
          throw BenchError("\(arguments.joined(separator: " ")) failed (status \(run.status))")
        }
        guard repetition > 0 else { continue }
        if isOurs {
          times.ours.append(run.wall)
          peaks.ours.append(run.peakBytes)
        } else {
          times.theirs.append(run.wall)
          peaks.theirs.append(run.peakBytes)
        }
      }
    }
    return Medians(
      oursMilliseconds: Distribution(times.ours).percentile(50),
      theirsMilliseconds: Distribution(times.theirs).percentile(50), oursPeakBytes: median(peaks.ours),
      theirsPeakBytes: median(peaks.theirs))
  }

  private static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[sorted.count / 2]
  }
}
