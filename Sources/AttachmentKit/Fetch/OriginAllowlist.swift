/// Where fetches may go: hosts and URL prefixes, checked for the URL asked for and for every
/// redirect before it is followed (`origin_not_allowed` otherwise). Empty (``any``, the
/// default) allows every origin; the private-network guard applies either way.
///
/// An entry is one of:
/// - a host, `media.example.com`: that host, on http or https and any port;
/// - a wildcard, `*.example.com`: every name under `example.com` (not `example.com` itself);
/// - a URL prefix, `https://media.example.com/push/` (see ``URLPrefix``): that scheme, host and
///   port, and paths under the prefix's at a segment boundary, never through a dot segment.
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
    /// URLs under this prefix.
    case prefix(URLPrefix)
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
    guard let parts = URLPrefix.Parts(url) else { return false }
    return entries.contains { entry in
      switch entry {
      case .host(let host): parts.host == host
      case .subdomains(let suffix): parts.host.hasSuffix("." + suffix)
      case .prefix(let prefix): prefix.matches(parts)
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
    if text.contains("://") { return URLPrefix(text).map(Entry.prefix) }
    let host = text.lowercased()
    if host.hasPrefix("*.") {
      let suffix = String(host.dropFirst(2))
      guard !suffix.isEmpty, !suffix.contains("*"), !suffix.contains("/") else { return nil }
      return .subdomains(of: suffix)
    }
    guard !host.contains("*"), !host.contains("/"), !host.contains("@") else { return nil }
    return .host(host)
  }
}
