/// Where fetches may go: hosts and URL prefixes, checked for the URL asked for and for every
/// redirect before it is followed (`origin_not_allowed` otherwise). Empty (``any``, the
/// default) allows every origin; the private-network guard applies either way.
///
/// An entry is one of:
/// - a host, `media.example.com`: that host, on http or https and any port;
/// - a wildcard, `*.example.com`: every name under `example.com` (not `example.com` itself);
/// - a URL prefix, `https://media.example.com/push/`: that scheme, host and port (the default
///   port when none is written), and a path that starts with the prefix's path at a segment
///   boundary (`/push` allows `/push` and `/push/a.jpg`, not `/pushover`). A URL with a dot
///   segment in its path (`/push/../x`, in any spelling, `%2e` included) never matches a
///   prefix with a path: libcurl and origins resolve those, so they could leave the prefix.
///
/// Hosts are compared lower-cased; IPv6 literals are written with their brackets; a host with a
/// percent escape matches nothing.
///
/// ```swift
/// configuration.downloader.allowedOrigins = try OriginAllowlist(["*.cdn.example.com", "https://media.example.com/push/"])
/// ```
public struct OriginAllowlist: Sendable, Hashable {
  /// One entry.
  public enum Entry: Sendable, Hashable {
    /// Exactly this host (lower-cased).
    case host(String)
    /// Every host that ends with `.` and this suffix (lower-cased).
    case subdomains(of: String)
    /// This scheme, host and port, and paths under `path` (empty: any path).
    case prefix(scheme: String, host: String, port: Int, path: String)
  }

  /// The entries, in the order given.
  public let entries: [Entry]

  /// No entry: every origin is allowed. The default.
  public static let any = OriginAllowlist(entries: [])

  private init(entries: [Entry]) { self.entries = entries }

  /// An allowlist of hosts, `*.` wildcards and `http(s)://` URL prefixes.
  /// - Throws: `invalid_configuration` for an empty entry, a wildcard anywhere but a leading
  ///   `*.`, a prefix that is not an http(s) URL with a host, or a prefix with a query or
  ///   fragment.
  public init(_ texts: [String]) throws(AttachmentError) {
    var entries: [Entry] = []
    for text in texts {
      guard let entry = Self.entry(text) else {
        throw AttachmentError(
          .invalidConfiguration,
          "'\(Redaction.escapeControlCharacters(text))' is no allowed origin: a host (media.example.com), "
            + "*.example.com, or a URL prefix (https://media.example.com/push/).")
      }
      if !entries.contains(entry) { entries.append(entry) }
    }
    self.init(entries: entries)
  }

  /// Whether there is no entry (every origin allowed).
  public var isEmpty: Bool { entries.isEmpty }

  /// Whether `url` (absolute) may be fetched: `true` for every URL when empty.
  public func allows(_ url: String) -> Bool {
    guard !entries.isEmpty else { return true }
    guard let parts = Self.parts(url) else { return false }
    return entries.contains { entry in
      switch entry {
      case .host(let host): parts.host == host
      case .subdomains(let suffix): parts.host.hasSuffix("." + suffix)
      case .prefix(let scheme, let host, let port, let path):
        parts.scheme == scheme && parts.host == host && parts.port == port
          && (path.isEmpty || (!parts.hasDotSegment && Self.path(parts.path, isUnder: path)))
      }
    }
  }

  /// The `origin_not_allowed` error for `url` (redacted in the message).
  func refusal(_ url: String, redirect: Bool) -> AttachmentError {
    AttachmentError(
      .originNotAllowed,
      "\(redirect ? "A redirect to" : "The URL") \(Redaction.redact(url)) is not on the allowed origins.")
  }

  // MARK: - Parsing

  private static func entry(_ text: String) -> Entry? {
    let text = text.trimmingCharacters(in: " \t")
    guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return nil }
    if text.contains("://") {
      guard let parts = parts(text), !text.contains("?"), !text.contains("#"), !parts.hasDotSegment else {
        return nil
      }
      return .prefix(
        scheme: parts.scheme, host: parts.host, port: parts.port, path: parts.path == "/" ? "" : parts.path)
    }
    let host = text.lowercased()
    if host.hasPrefix("*.") {
      let suffix = String(host.dropFirst(2))
      guard !suffix.isEmpty, !suffix.contains("*"), !suffix.contains("/") else { return nil }
      return .subdomains(of: suffix)
    }
    guard !host.contains("*"), !host.contains("/"), !host.contains("@") else { return nil }
    return .host(host)
  }

  /// A URL's scheme, host (lower-cased), port (the scheme's default when none) and path.
  private struct Parts {
    var scheme: String
    var host: String
    var port: Int
    var path: String
    var hasDotSegment: Bool
  }

  private static func parts(_ url: String) -> Parts? {
    // A percent-encoded host is decoded by libcurl, not here: it matches no entry.
    guard let authority = URLAuthority(url), !authority.host.isEmpty, !authority.host.contains("%") else {
      return nil
    }
    let scheme = authority.scheme.lowercased()
    guard scheme == "http" || scheme == "https" else { return nil }
    let defaultPort = scheme == "https" ? 443 : 80
    let port: Int
    if let text = authority.port, !text.isEmpty {
      guard let value = Int(text), (1...65535).contains(value) else { return nil }
      port = value
    } else {
      port = defaultPort
    }
    var rest = url[authority.range.upperBound...]
    if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
    let path = rest.isEmpty ? "/" : String(rest)
    let dotSegments: Set<String> = [".", "..", "%2e", "%2e%2e", ".%2e", "%2e."]
    let hasDotSegment = path.split(separator: "/", omittingEmptySubsequences: false).contains {
      dotSegments.contains($0.lowercased())
    }
    return Parts(
      scheme: scheme, host: authority.host.lowercased(), port: port, path: path, hasDotSegment: hasDotSegment)
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
