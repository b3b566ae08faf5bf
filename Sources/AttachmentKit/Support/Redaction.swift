/// Keeps credentials and control characters in URLs out of messages, logs and terminals.
public enum Redaction {
  /// `url` with any `user:password@` replaced by `***@` and control characters escaped as
  /// `\u{..}`, fit to print.
  public static func redact(_ url: String) -> String {
    var text = url
    if let separator = text.firstRange(of: "://") {
      let afterScheme = separator.upperBound
      let authorityEnd =
        text[afterScheme...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
      if let at = text[afterScheme..<authorityEnd].lastIndex(of: "@") {
        text.replaceSubrange(afterScheme..<at, with: "***")
      }
    }
    return escapeControlCharacters(text)
  }

  /// `text` with control characters (C0, DEL, C1) written as `\u{XX}` so they cannot steer a
  /// terminal.
  public static func escapeControlCharacters(_ text: String) -> String {
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

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }
}
