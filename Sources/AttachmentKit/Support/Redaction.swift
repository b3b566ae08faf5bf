/// Keeps credentials and control characters in URLs out of messages, logs and terminals.
public enum Redaction {
  /// `url` with any `user:password@` replaced by `***@` and control characters escaped as
  /// `\u{..}`, fit to print.
  public static func redact(_ url: String) -> String {
    // Without an `@` there is no user information to split out (the common case, and the
    // split is the costly part).
    guard url.utf8.contains(UInt8(ascii: "@")) else { return escapeControlCharacters(url) }
    return redact(url, authority: URLAuthority(url))
  }

  /// `url`, already split into `authority` (nil: not split), redacted as ``redact(_:)``.
  static func redact(_ url: String, authority: URLAuthority?) -> String {
    var text = url
    if let authority, let userInfo = authority.userInfo {
      text.replaceSubrange(userInfo.startIndex..<userInfo.endIndex, with: "***")
    }
    return escapeControlCharacters(text)
  }

  /// `text` with control characters (C0, DEL, C1) and bidirectional formatting characters
  /// written as `\u{XX}`, so they can neither steer a terminal nor reorder what a line shows.
  /// (Invalid UTF-8 never reaches here: Swift strings hold it as U+FFFD.)
  public static func escapeControlCharacters(_ text: String) -> String {
    // Printable ASCII holds no control character: checked byte by byte, no scalar decoding.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      if isControl(scalar) {
        out += "\\u{" + String(scalar.value, radix: 16) + "}"
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// Whether a scalar must never be printed raw: C0, DEL and C1 controls, bidirectional marks
  /// and overrides. Every output of the command line and the runner escapes these.
  public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F: true
    case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi marks and overrides
    default: false
    }
  }
}
