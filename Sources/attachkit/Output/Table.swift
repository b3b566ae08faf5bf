import AttachmentKit

/// The human table: one row per input, and a summary line.
enum Table {
  private static let columns: [(String, Int)] = [
    ("OUTCOME", 9), ("TYPE", 5), ("SIZE", 9), ("SOURCE", 12), ("TIME", 10), ("INPUT", 0),
  ]

  static var header: String {
    columns.map { pad($0.0, $0.1) }.joined(separator: " ")
  }

  static func row(_ record: ResultRecord) -> String {
    let type = record.validation?.type.family ?? "-"
    let size = record.validation.map { bytes($0.bytes) } ?? "-"
    var source = record.source?.rawValue ?? "-"
    if record.isStale { source += "*" }
    let time = duration(record.totalMicroseconds)
    var line = [
      pad(record.outcome.rawValue, 9), pad(type, 5), pad(size, 9), pad(source, 12), pad(time, 10),
      record.displayedInput,
    ].joined(separator: " ")
    if record.outcome == .accepted, let path = record.path, path != record.input {
      // Where the delivered file is (a cached file, `-o`'s copy, a rescue's output): the
      // path a script or a person opens next (issue 53).
      line += "\n          ↳ file: \(Terminal.safe(path))"
    }
    if let error = record.error {
      line += "\n          ↳ \(error.code.rawValue): \(Terminal.safe(error.message))"
    }
    if let rescued = record.validation?.rescued {
      var from = Terminal.safe(rescued.from)
      if let width = rescued.originalWidth, let height = rescued.originalHeight {
        from += " \(width)×\(height)"
      }
      from += ", " + bytes(rescued.originalBytes)
      line += "\n          ↳ rescued from \(from): " + rescued.actions.map(\.rawValue).joined(separator: ", ")
    }
    for warning in record.validation?.warnings ?? [] where !isTransportSecurity(warning) {
      line += "\n          ↳ warning: \(Terminal.safe(warning))"
    }
    if let fallback = record.fallback {
      line +=
        "\n          ↳ fallback \(Terminal.safeURL(fallback.url)) in place of \(fallback.error.code.rawValue): "
        + Terminal.safe(fallback.error.message)
    }
    return line
  }

  static func summary(records: [ResultRecord], wallMicroseconds: Int64, interrupted: Bool) -> String {
    let accepted = records.filter { $0.outcome == .accepted }.count
    let rejected = records.filter { $0.outcome == .rejected }.count
    let failed = records.filter { $0.outcome == .failed }.count
    let hits = records.filter { $0.source?.isCacheAnswer == true }.count
    let transferred = records.reduce(Int64(0)) { $0 + ($1.bytesTransferred ?? 0) }
    let latencies = records.map(\.totalMicroseconds).sorted()
    let fallbacks = records.filter { $0.fallback != nil }.count
    let rescued = records.filter { $0.outcome == .accepted && $0.validation?.rescued != nil }.count
    var text = "\(accepted) accepted, \(rejected) rejected, \(failed) failed"
    var notes: [String] = []
    if rescued > 0 { notes.append("\(rescued) rescued") }
    if fallbacks > 0 { notes.append("\(fallbacks) accepted by fallback") }
    if !notes.isEmpty { text += " (" + notes.joined(separator: ", ") + ")" }
    text += " · \(bytes(transferred)) transferred · \(hits) cache hits"
    text += " · wall \(duration(wallMicroseconds))"
    if !latencies.isEmpty {
      text += " · p50 \(duration(percentile(latencies, 0.5))) p99 \(duration(percentile(latencies, 0.99)))"
    }
    if interrupted { text += " · interrupted" }
    return text
  }

  /// Whether `warning` is an App Transport Security warning (``TransportSecurity``): said once
  /// per run under the table (``transportSecurityNotes(records:)``), not under each row.
  static func isTransportSecurity(_ warning: String) -> Bool {
    warning.hasPrefix(TransportSecurity.code + ":")
  }

  /// Each distinct App Transport Security warning of `records` once, with how many results it
  /// concerns, as lines ending in a line feed (empty when there is none).
  static func transportSecurityNotes(records: [ResultRecord]) -> String {
    var counts: [String: Int] = [:]
    var order: [String] = []
    for warning in records.flatMap({ $0.validation?.warnings ?? [] }) where isTransportSecurity(warning) {
      if counts[warning] == nil { order.append(warning) }
      counts[warning, default: 0] += 1
    }
    return order.map { warning in
      let count = counts[warning] ?? 0
      return "warning (\(count) \(count == 1 ? "result" : "results")): \(Terminal.safe(warning))"
        + " (--no-ats-warning hides it)\n"
    }.joined()
  }

  /// The nearest-rank percentile of sorted values.
  static func percentile(_ sorted: [Int64], _ fraction: Double) -> Int64 {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
  }

  static func bytes(_ count: Int64) -> String {
    if count < 1024 { return "\(count) B" }
    if count < 1024 * 1024 { return decimal(Double(count) / 1024) + " KiB" }
    return decimal(Double(count) / 1_048_576) + " MiB"
  }

  static func duration(_ microseconds: Int64) -> String {
    if microseconds < 1000 { return "\(microseconds) µs" }
    if microseconds < 1_000_000 { return decimal(Double(microseconds) / 1000) + " ms" }
    return decimal(Double(microseconds) / 1_000_000) + " s"
  }

  private static func decimal(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
  }

  private static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
