/// A URL prefix: a scheme, a host, a port (the scheme's default when none is written) and an
/// optional path. A URL is under it when its scheme, host (compared lower-cased) and port are
/// the prefix's and its path starts with the prefix's at a segment boundary (`/push` holds
/// `/push` and `/push/a.jpg`, not `/pushover`). A URL whose path has a dot segment (`..` or `.`,
/// percent-encoded too) is under no prefix with a path, since libcurl and origins resolve those;
/// a host with a percent escape matches nothing. What ``OriginAllowlist`` and ``OriginHeaders``
/// match URLs against.
public struct URLPrefix: Sendable, Hashable {
  /// `http` or `https`, lower-cased.
  public let scheme: String
  /// The host, lower-cased (an IPv6 literal with its brackets).
  public let host: String
  /// The port.
  public let port: Int
  /// The path the URL's must start with; empty for any path.
  public let path: String

  /// Parses `text`, an http(s) URL with a host and no query or fragment; `nil` otherwise.
  public init?(_ text: String) {
    guard !text.contains("?"), !text.contains("#"), let parts = Parts(text), !parts.hasDotSegment else {
      return nil
    }
    scheme = parts.scheme
    host = parts.host
    port = parts.port
    path = parts.path == "/" ? "" : parts.path
  }

  /// Whether the absolute `url` is under this prefix.
  public func matches(_ url: String) -> Bool { Parts(url).map(matches) ?? false }

  func matches(_ parts: Parts) -> Bool {
    parts.scheme == scheme && parts.host == host && parts.port == port
      && (path.isEmpty || (!parts.hasDotSegment && Self.path(parts.path, isUnder: path)))
  }

  /// What a URL is compared by.
  struct Parts {
    var scheme: String
    var host: String
    var port: Int
    var path: String
    var hasDotSegment: Bool

    /// A URL's scheme, host (lower-cased), port (the scheme's default when none) and path;
    /// `nil` for anything but an http(s) URL with a host without percent escapes.
    init?(_ url: String) {
      // A percent-encoded host is decoded by libcurl, not here: it matches nothing.
      guard let authority = URLAuthority(url), !authority.host.isEmpty, !authority.host.contains("%") else {
        return nil
      }
      let scheme = authority.scheme.lowercased()
      guard scheme == "http" || scheme == "https" else { return nil }
      if let text = authority.port, !text.isEmpty {
        guard let value = Int(text), (1...65535).contains(value) else { return nil }
        port = value
      } else {
        port = scheme == "https" ? 443 : 80
      }
      var rest = url[authority.range.upperBound...]
      if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
      path = rest.isEmpty ? "/" : String(rest)
      let dotSegments: Set<String> = [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
      hasDotSegment = path.split(separator: "/", omittingEmptySubsequences: false).contains {
        dotSegments.contains($0.lowercased())
      }
      self.scheme = scheme
      host = authority.host.lowercased()
    }
  }

  /// Whether `path` is `prefix` or lies under it at a segment boundary.
  private static func path(_ path: String, isUnder prefix: String) -> Bool {
    let bytes = Array(path.utf8)
    guard bytes.starts(with: prefix.utf8) else { return false }
    let length = prefix.utf8.count
    return prefix.utf8.last == UInt8(ascii: "/") || bytes.count == length
      || bytes[length] == UInt8(ascii: "/")
  }
}
