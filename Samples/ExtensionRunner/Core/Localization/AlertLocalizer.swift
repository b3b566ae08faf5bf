/// The `localize` step: loads the strings, resolves the alert's `loc-key` fields and traces
/// what happened. Used by the extension as its first critical step, and by the host for a
/// payload without `mutable-content: 1` (iOS localizes every notification it shows).
public enum AlertLocalizer {
  /// Resolves `localization` with the strings of `source` and records one `localize` step in
  /// `trace`. Returns `nil` when the alert has no `loc-key` (nothing to change). A missing or
  /// bad file, or a missing key, is traced as `failed` and the keys are shown as they are: the
  /// result is always usable.
  public static func localize(
    _ localization: AlertLocalization, source: LocalizationSource?, trace: Trace
  ) -> AlertLocalization.Resolution? {
    guard !localization.isEmpty else {
      trace.note("localize", .skipped, detail: "no loc-key in aps.alert")
      return nil
    }
    let step = trace.begin("localize")
    var table: LocalizationTable?
    var problems: [String] = []
    if let source {
      do {
        table = try LocalizationTable.load(source)
      } catch {
        problems.append("bad strings file: \(error.message)")
      }
    } else {
      problems.append("no strings file (--strings)")
    }
    let resolution = localization.resolve(with: table)
    if !resolution.missingKeys.isEmpty {
      problems.append("missing key " + resolution.missingKeys.joined(separator: ", ") + ": shown as is")
    }
    if !resolution.fallbackKeys.isEmpty {
      problems.append("fallback language for " + resolution.fallbackKeys.joined(separator: ", "))
    }
    problems += resolution.formatNotes
    let fields = [("title", resolution.title), ("subtitle", resolution.subtitle), ("body", resolution.body)]
      .compactMap { $0.1 == nil ? nil : $0.0 }.joined(separator: ", ")
    let from = table.map { " from \($0.summary)" } ?? ""
    let failed = table == nil || !resolution.missingKeys.isEmpty
    trace.end(
      step, failed ? .failed : .ok,
      detail: (["localized \(fields)\(from)"] + problems).joined(separator: "; "))
    return resolution
  }
}

extension AlertLocalization.Resolution {
  /// Puts the resolved fields into `content` (a field without a key is left as it is).
  public func apply(to content: inout NotificationContent) {
    if let title { content.title = title }
    if let subtitle { content.subtitle = subtitle }
    if let body { content.body = body }
  }
}
