/// The wall-time budget of a Notification Service Extension, in seconds.
let budgetSeconds = 30.0

/// How a latency appears in JSON keys: `KEY_p50_us` or `KEY_p50_ms`.
enum KeyUnit: String, Sendable {
  /// Microseconds.
  case us
  /// Milliseconds.
  case ms

  /// How many of this unit make a second.
  var perSecond: Double { self == .us ? 1e6 : 1e3 }
}

/// One measured latency distribution.
struct LatencyRow: Sendable {
  /// The scenario group, e.g. `1 cache hit`.
  var section: String
  /// What was timed.
  var name: String
  /// The JSON key prefix.
  var key: String
  /// The JSON unit.
  var unit: KeyUnit
  /// The samples.
  var distribution: Distribution
}

/// What the two sides of a ratio are measured in.
enum RatioUnit: Sendable {
  /// Wall or CPU time in seconds (medians).
  case seconds
  /// Bytes (a peak resident set, bytes transferred).
  case bytes
  /// A plain count (jobs run).
  case count
}

/// Our p50 wall time (or peak memory, bytes, a count) against another client's, on the same
/// work in the same run.
struct RatioRow: Sendable {
  /// What was compared.
  var name: String
  /// The JSON key of the ratio.
  var key: String
  /// Our p50, in ``unit``.
  var ours: Double
  /// The other client's p50, in the same unit.
  var theirs: Double
  /// The ratio the goal allows at most, when there is a goal.
  var goal: Double?
  /// What ``ours`` and ``theirs`` are measured in.
  var unit = RatioUnit.seconds

  /// Ours / theirs (below 1: we are faster).
  var ratio: Double { theirs > 0 ? ours / theirs : 0 }
}

/// The unit a single value is shown in.
enum ValueUnit: Sendable {
  /// Bytes.
  case bytes
  /// Mebibytes (value given in bytes).
  case mebibytes
  /// Files per second.
  case perSecond
  /// Milliseconds (value given in seconds).
  case milliseconds
  /// A plain count.
  case count
}

/// One single measured value (bytes, memory, throughput).
struct ValueRow: Sendable {
  /// The scenario group.
  var section: String
  /// What was measured.
  var name: String
  /// The JSON key.
  var key: String
  /// The value (bytes for memory and sizes, seconds for times).
  var value: Double
  /// How it is shown.
  var unit: ValueUnit

  /// The JSON value: bytes and counts as is, mebibytes and milliseconds converted.
  var jsonValue: Double {
    switch unit {
    case .bytes, .count, .perSecond: value
    case .mebibytes: value / 1_048_576
    case .milliseconds: value * 1000
    }
  }
}

/// A goal from the brief and whether this run met it.
struct GoalCheck: Sendable {
  /// The goal.
  var goal: String
  /// What was measured.
  var measured: String
  /// Whether it was met (`nil` when not measured in this run).
  var met: Bool?
}

/// Everything one run measured, in the order it was measured.
struct Report: Sendable {
  /// Run facts: date, mode, server, versions (strings, written to JSON too).
  var facts: [(key: String, value: String)] = []
  /// Latency distributions.
  var latencies: [LatencyRow] = []
  /// Comparisons with URLSession and curl.
  var ratios: [RatioRow] = []
  /// Single values.
  var values: [ValueRow] = []
  /// Remarks that qualify a number (printed under the table and in the HTML).
  var notes: [String] = []

  /// Adds a latency row.
  mutating func add(
    _ section: String, _ name: String, key: String, unit: KeyUnit, _ distribution: Distribution
  ) {
    latencies.append(
      LatencyRow(section: section, name: name, key: key, unit: unit, distribution: distribution))
  }

  /// Adds a value row.
  mutating func add(_ section: String, _ name: String, key: String, value: Double, unit: ValueUnit) {
    values.append(ValueRow(section: section, name: name, key: key, value: value, unit: unit))
  }

  /// Adds a ratio row.
  mutating func addRatio(
    _ name: String, key: String, ours: Double, theirs: Double, goal: Double? = nil, unit: RatioUnit = .seconds
  ) {
    ratios.append(RatioRow(name: name, key: key, ours: ours, theirs: theirs, goal: goal, unit: unit))
  }

  /// The latency row with JSON key prefix `key`.
  func latency(_ key: String) -> LatencyRow? { latencies.first { $0.key == key } }
  /// The ratio row with JSON key `key`.
  func ratio(_ key: String) -> RatioRow? { ratios.first { $0.key == key } }
  /// The value row with JSON key `key`.
  func value(_ key: String) -> ValueRow? { values.first { $0.key == key } }
}
