/// The checks a URL passes before any connection is made.
enum URLCheck {
  /// Why `url` cannot be fetched, or `nil` when it is an absolute http(s) URL with a host.
  static func problem(with url: String) -> AttachmentError? {
    guard let authority = URLAuthority(url) else {
      return AttachmentError(.invalidURL, "The URL is not absolute: \(Redaction.redact(url)).")
    }
    return problem(with: url, authority: authority)
  }

  /// Why `url`, already split into `authority`, cannot be fetched, or `nil`.
  static func problem(with url: String, authority: URLAuthority) -> AttachmentError? {
    // http and https, in any case, are known at once (every URL a hit parses); others checked
    // as a scheme first, for the message.
    if !Self.isHTTP(authority.scheme) {
      let scheme = authority.scheme.lowercased()
      guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else {
        return AttachmentError(.invalidURL, "The URL has no valid scheme: \(Redaction.redact(url)).")
      }
      return AttachmentError(
        .unsupportedScheme, "Only http and https URLs are fetched, not \(scheme):.")
    }
    if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
      return AttachmentError(.invalidURL, "The URL contains spaces or control characters.")
    }
    guard !authority.host.isEmpty else {
      return AttachmentError(.invalidURL, "The URL has no host: \(Redaction.redact(url)).")
    }
    return nil
  }

  /// Whether `scheme` is `http` or `https` in any letter case, compared byte by byte.
  static func isHTTP(_ scheme: Substring) -> Bool {
    let bytes = scheme.utf8
    guard bytes.count == 4 || bytes.count == 5 else { return false }
    for (byte, expected) in zip(bytes, "https".utf8) where byte | 0x20 != expected { return false }
    return true
  }
}
