/// The cache key of a URL: the URL normalized so that spellings of the same resource meet.
///
/// Scheme and host are lower-cased, the default port (80 for http, 443 for https) is dropped,
/// the fragment is dropped, and an empty path becomes `/`. Path and query are kept exactly
/// (they are case-sensitive). The key is never used as a file name: the cache names its record
/// by a keyed hash of it (``CacheRecordKey``). Equal keys are equal in their bytes: `==` compares
/// the UTF-8 of ``normalized``, never Swift's canonical equivalence (`café` spelled with a
/// combining accent is another URL, as it is to the origin).
package struct URLKey: Hashable, Sendable {
  /// The normalized URL text.
  package private(set) var normalized: String
  /// Whether ``CacheKeyRules`` left query parameters out of ``normalized``, or filed it in a
  /// profile's key space (``CacheKeyRules/variant``): the URL fetched is then not the key, and
  /// the record keeps it beside the key.
  package private(set) var droppedParameters: Bool

  /// Normalizes `url`, or returns `nil` when it is not an absolute http(s) URL with a host.
  package init?(_ url: String) {
    guard let checked = try? AttachmentURL(url) else { return nil }
    self = checked.key
  }

  /// Normalizes `url`, which ``AttachmentURL`` has checked and split into `authority`, leaving
  /// out the query parameters `rules` ignore.
  init(checked url: String, authority: URLAuthority, rules: CacheKeyRules = .none) {
    // Byte by byte (every delimiter is ASCII): a hit normalizes its URL on each call.
    let scheme = Self.lowercased(authority.scheme)
    var rest = url[authority.range.upperBound...]
    if let hash = rest.utf8.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }
    let rooted = rest.utf8.first.map { $0 == UInt8(ascii: "?") } ?? true
    (rest, droppedParameters) = rules.filtered(rest)
    let userInfo = authority.userInfo.map { "\($0)@" } ?? ""
    var port = authority.port.map { ":\($0)" } ?? ""
    if (scheme == "http" && port == ":80") || (scheme == "https" && port == ":443") || port == ":" {
      port = ""
    }
    normalized = "\(scheme)://\(userInfo)\(Self.lowercased(authority.host))\(port)\(rooted ? "/" : "")\(rest)"
    if let variant = rules.variant {
      // A profile's key space: the record keeps the URL fetched beside this key.
      normalized += "#" + variant
      droppedParameters = true
    }
  }

  /// `text` lower-cased: a copy when it holds no upper-case ASCII and no non-ASCII byte (the
  /// usual host and scheme), else Unicode's lower-casing.
  private static func lowercased(_ text: Substring) -> String {
    text.utf8.allSatisfy({ $0 < 0x80 && !(0x41...0x5A).contains($0) }) ? String(text) : text.lowercased()
  }

  /// Whether two keys are the same bytes.
  package static func == (lhs: URLKey, rhs: URLKey) -> Bool {
    lhs.normalized.utf8.elementsEqual(rhs.normalized.utf8)
  }

  /// Hashes the bytes, consistently with ``==``.
  package func hash(into hasher: inout Hasher) {
    for byte in normalized.utf8 { hasher.combine(byte) }
  }
}
