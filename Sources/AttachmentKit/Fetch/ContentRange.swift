/// A `Content-Range: bytes first-last/total` value (RFC 9110 §14.4), as a `206` sends it.
struct ContentRange: Equatable, Sendable {
  /// The offset of the first byte sent.
  var first: Int64
  /// The offset of the last byte sent (inclusive).
  var last: Int64
  /// The whole representation's length, or `nil` when the server sent `*`.
  var total: Int64?

  /// Parses `text`; `nil` when it is absent, not in bytes, or inconsistent (last before
  /// first, or past the total).
  init?(_ text: String?) {
    guard let text else { return nil }
    let trimmed = text.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard trimmed.count == 2, trimmed[0].lowercased() == "bytes" else { return nil }
    let parts = trimmed[1].split(separator: "/", maxSplits: 1)
    guard parts.count == 2 else { return nil }
    let bounds = parts[0].split(separator: "-", maxSplits: 1)
    guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last
    else { return nil }
    let total: Int64?
    if parts[1] == "*" {
      total = nil
    } else {
      guard let value = Int64(parts[1]), last < value else { return nil }
      total = value
    }
    self.first = first
    self.last = last
    self.total = total
  }
}
