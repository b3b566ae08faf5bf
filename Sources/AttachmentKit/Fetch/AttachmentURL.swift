/// An absolute `http` or `https` URL, checked and split once and then carried through the
/// pipeline, the downloader and the cache, which use what was computed here (the check, the
/// cache key, the redacted text) instead of parsing the text again.
///
/// ```swift
/// let url = try AttachmentURL("https://cdn.example.com/p/1.jpg")
/// let attachment = try await pipeline.attachment(for: url, deadline: .now + .seconds(25))
/// ```
public struct AttachmentURL: Sendable, Hashable, CustomStringConvertible {
  /// The URL exactly as given: what is requested.
  public let text: String
  /// The URL with any `user:password@` replaced by `***@` and control characters escaped:
  /// fit for messages, logs and terminals.
  public let redacted: String
  /// The cache key (the normalized URL and its digest).
  package let key: URLKey
  /// The rules ``key`` was made with (see ``keyed(by:)``).
  let keyRules: CacheKeyRules
  /// The normalized URL (lower-case scheme and host, default port and fragment dropped): two
  /// spellings of one resource share it, and with it one cache entry and one fetch. The key a
  /// face keys its own per-URL state by (serve's admission and hit memo).
  public var normalized: String { key.normalized }

  /// Checks and splits `text`.
  /// - Throws: `invalid_url` when it is not absolute, has no valid scheme or no host, or
  ///   contains spaces or control characters; `unsupported_scheme` when the scheme is not
  ///   `http` or `https`. Nothing is resolved or fetched.
  public init(_ text: String) throws(AttachmentError) {
    guard let authority = URLAuthority(text) else {
      throw AttachmentError(.invalidURL, "The URL is not absolute: \(Redaction.redact(text)).")
    }
    if let problem = URLCheck.problem(with: text, authority: authority) { throw problem }
    self.text = text
    redacted = Redaction.redact(text, authority: authority)
    key = URLKey(checked: text, authority: authority)
    keyRules = .none
  }

  /// This URL with its cache key made under `rules` (the request is unchanged): `self` when it
  /// was keyed by them already. The pipeline keys every URL it is given by its configuration's
  /// ``CacheConfiguration/keyRules``; a face that keys its own per-URL state (serve's memos)
  /// asks ``AttachmentPipeline/keyed(_:)``.
  package func keyed(by rules: CacheKeyRules) -> AttachmentURL {
    guard rules != keyRules, let authority = URLAuthority(text) else { return self }
    return AttachmentURL(self, key: URLKey(checked: text, authority: authority, rules: rules), rules: rules)
  }

  private init(_ url: AttachmentURL, key: URLKey, rules: CacheKeyRules) {
    text = url.text
    redacted = url.redacted
    self.key = key
    keyRules = rules
  }

  /// The redacted URL.
  public var description: String { redacted }

  /// Two values are equal when their texts are.
  public static func == (lhs: AttachmentURL, rhs: AttachmentURL) -> Bool { lhs.text == rhs.text }

  /// Hashes the text.
  public func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
