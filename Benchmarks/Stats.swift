/// A set of timed samples and its percentiles (nearest rank on the sorted samples: p0 is the
/// fastest, p100 the slowest). No mean is reported without them.
struct Distribution: Sendable {
  /// The samples in seconds, sorted ascending.
  let sorted: [Double]

  /// Makes a distribution from samples in seconds (any order).
  init(seconds samples: [Double]) {
    sorted = samples.sorted()
  }

  /// Makes a distribution of plain values (bytes, counts), any order.
  init(values: [Double]) {
    sorted = values.sorted()
  }

  /// Makes a distribution from measured durations.
  init(_ durations: [Duration]) {
    self.init(seconds: durations.map(\.seconds))
  }

  /// How many samples there are.
  var count: Int { sorted.count }

  /// The `p`-th percentile (0…100) by nearest rank, or 0 when there are no samples.
  func percentile(_ p: Double) -> Double {
    guard let last = sorted.last else { return 0 }
    if p <= 0 { return sorted[0] }
    if p >= 100 { return last }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
  }

  /// The five percentiles every row reports.
  var summary: Percentiles {
    Percentiles(
      p0: percentile(0), p50: percentile(50), p90: percentile(90), p99: percentile(99),
      p100: percentile(100))
  }
}

/// p0, p50, p90, p99 and p100 of a distribution, in the distribution's unit.
struct Percentiles: Sendable {
  /// The smallest sample.
  var p0: Double
  /// The median.
  var p50: Double
  /// The 90th percentile.
  var p90: Double
  /// The 99th percentile.
  var p99: Double
  /// The largest sample.
  var p100: Double

  /// All five, in order, with their labels.
  var labelled: [(label: String, value: Double)] {
    [("p0", p0), ("p50", p50), ("p90", p90), ("p99", p99), ("p100", p100)]
  }
}

extension Duration {
  /// The duration in seconds, as a `Double`.
  var seconds: Double {
    let (whole, attoseconds) = components
    return Double(whole) + Double(attoseconds) / 1e18
  }
}

/// Runs `body` and returns how long it took on the continuous clock, with its result.
func timed<T>(_ body: () async throws -> T) async rethrows -> (Duration, T) {
  let start = ContinuousClock.now
  let value = try await body()
  return (ContinuousClock.now - start, value)
}
