import Glibc

/// Request headers sent only to one origin: credentials for a private origin (an
/// `Authorization` token, an API key), from a file of lines `URL-PREFIX Header-Name: value`.
///
/// A header goes with every request whose URL is under its line's ``URLPrefix`` (scheme, host,
/// port, and an optional path), and with nothing else: a redirect to a URL that gets other
/// headers is followed by a new request carrying that URL's own (none, for another origin), as
/// curl drops credentials on a redirect to another host. The values are never logged, never in
/// a result or an error, and never in the cache key.
///
/// ```text
/// # private media
/// https://media.example.com/private/ Authorization: Bearer 3q2+7w==
/// https://api.example.net X-Api-Key: k-123
/// ```
public struct OriginHeaders: Sendable, Equatable {
  /// One header and the URLs it is sent to.
  public struct Rule: Sendable, Equatable, CustomStringConvertible {
    /// The URLs it is sent to.
    public let prefix: URLPrefix
    /// The header's name, as written.
    public let name: String
    /// Its value.
    public let value: String

    /// The rule with its value hidden (`https://media.example.com/ Authorization: ***`), so
    /// that printing a configuration shows no credential.
    public var description: String {
      "\(prefix.scheme)://\(prefix.host):\(prefix.port)\(prefix.path) \(name): ***"
    }
  }

  /// The rules, in the file's order.
  public let rules: [Rule]

  /// No header. The default.
  public static let none = OriginHeaders(rules: [])

  /// Names the downloader sets itself, which a rule may not replace.
  static let reserved: Set<String> = [
    "host", "content-length", "transfer-encoding", "connection", "te", "upgrade", "range", "if-range",
    "if-none-match", "if-modified-since", "accept-encoding", "expect", "proxy-authorization",
  ]

  private init(rules: [Rule]) { self.rules = rules }

  /// The rules of a file's text: one `URL-PREFIX Name: value` a line; blank lines and lines
  /// starting with `#` are skipped.
  /// - Throws: `invalid_configuration` naming the line (never its value) when it has no prefix
  ///   and header, the prefix is no http(s) URL prefix, the name is no HTTP token or is one the
  ///   downloader sets, or the value holds a control character.
  public init(fileText text: String) throws(AttachmentError) {
    var rules: [Rule] = []
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let trimmed = line.trimmingCharacters(in: " \t\r")
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      guard let rule = Self.rule(trimmed) else {
        throw AttachmentError(
          .invalidConfiguration,
          "Line \(index + 1) of the origin headers is not 'URL-PREFIX Name: value' with an http(s) URL prefix, "
            + "a header name the downloader does not set itself, and no control character.")
      }
      rules.append(rule)
    }
    self.init(rules: rules)
  }

  /// The rules of the file at `path`, which only its owner may read.
  /// - Throws: `invalid_configuration` when the file cannot be read, when its group or others
  ///   may read or write it (`chmod 600`), or as ``init(fileText:)``.
  public init(file path: String) throws(AttachmentError) {
    let name = Redaction.escapeControlCharacters(path)
    var info = stat()
    guard stat(path, &info) == 0 else {
      throw AttachmentError(
        .invalidConfiguration,
        "The origin headers file \(name) cannot be read: \(String(cString: strerror(errno))).")
    }
    guard info.st_mode & S_IFMT != S_IFDIR else {
      throw AttachmentError(
        .invalidConfiguration,
        "The origin headers file \(name) cannot be read: \(String(cString: strerror(EISDIR))).")
    }
    guard info.st_mode & 0o077 == 0 else {
      throw AttachmentError(
        .invalidConfiguration,
        "The origin headers file \(name) holds credentials but others may read it: chmod 600 it.")
    }
    switch FileSystem.smallFile(path) {
    case .success(let bytes): try self.init(fileText: String(decoding: bytes, as: UTF8.self))
    case .failure(let failure):
      throw AttachmentError(
        .invalidConfiguration, "The origin headers file \(name) cannot be read: \(failure.reason).")
    }
  }

  /// Whether there is no rule.
  public var isEmpty: Bool { rules.isEmpty }

  /// The header lines (`Name: value`) a request to `url` carries, in the file's order.
  func lines(for url: String) -> [String] {
    guard !rules.isEmpty, let parts = URLPrefix.Parts(url) else { return [] }
    return rules.filter { $0.prefix.matches(parts) }.map { "\($0.name): \($0.value)" }
  }

  private static func rule(_ line: String) -> Rule? {
    guard let space = line.firstIndex(where: { $0 == " " || $0 == "\t" }),
      let prefix = URLPrefix(String(line[..<space]))
    else { return nil }
    let header = line[space...].drop(while: { $0 == " " || $0 == "\t" })
    guard let colon = header.firstIndex(of: ":") else { return nil }
    let name = String(header[..<colon])
    let value = String(header[header.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" }))
    guard HeaderSyntax.isName(name), !reserved.contains(name.lowercased()), HeaderSyntax.isValue(value) else {
      return nil
    }
    return Rule(prefix: prefix, name: name, value: value)
  }
}
