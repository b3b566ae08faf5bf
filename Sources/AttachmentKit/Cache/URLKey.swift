/// The cache key of a URL: the URL normalized so that spellings of the same resource meet.
///
/// Scheme and host are lower-cased, the default port (80 for http, 443 for https) is dropped,
/// the fragment is dropped, and an empty path becomes `/`. Path and query are kept exactly
/// (they are case-sensitive). The key is never used as a file name: the cache names files by
/// its SHA-256.
struct URLKey: Hashable, Sendable {
  /// The normalized URL text.
  let normalized: String

  /// Normalizes `url`, or returns `nil` when it is not an absolute http(s) URL with a host.
  init?(_ url: String) {
    guard URLCheck.problem(with: url) == nil, let separator = url.firstRange(of: "://") else {
      return nil
    }
    let scheme = url[..<separator.lowerBound].lowercased()
    var rest = url[separator.upperBound...]
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
    var authority = String(rest[..<authorityEnd])
    var pathAndQuery = String(rest[authorityEnd...])
    if pathAndQuery.isEmpty || pathAndQuery.hasPrefix("?") { pathAndQuery = "/" + pathAndQuery }

    var userInfo = ""
    if let at = authority.lastIndex(of: "@") {
      userInfo = String(authority[...at])
      authority = String(authority[authority.index(after: at)...])
    }
    var host = authority
    var port = ""
    if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
      host = String(authority[...close])
      port = String(authority[authority.index(after: close)...])
    } else if let colon = authority.lastIndex(of: ":") {
      host = String(authority[..<colon])
      port = String(authority[colon...])
    }
    if (scheme == "http" && port == ":80") || (scheme == "https" && port == ":443") || port == ":" {
      port = ""
    }
    normalized = "\(scheme)://\(userInfo)\(host.lowercased())\(port)\(pathAndQuery)"
    let hasher = SHA256Hasher()
    Array(normalized.utf8).withUnsafeBytes { hasher.update($0) }
    digest = hasher.finalize() ?? String(repeating: "0", count: 64)
  }

  /// The SHA-256 of the normalized URL, 64 hex digits: the index record's file name.
  /// Computed once here, since a lookup and a publish for the same key both need it.
  let digest: String
}
