/// What HTTP allows in a header field that a person configured: its name must be a token (RFC
/// 9110 §5.6.2), and its value may hold no control character but a tab (no CR or LF, so no
/// header can be injected). One check, for the downloader's per-origin headers and serve's own.
package enum HeaderSyntax {
  /// Whether `name` is a non-empty HTTP token.
  package static func isName(_ name: some StringProtocol) -> Bool {
    !name.isEmpty && name.utf8.allSatisfy(isTokenByte)
  }

  /// Whether `value` holds no control character but a tab.
  package static func isValue(_ value: some StringProtocol) -> Bool {
    value.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) }
  }

  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }
}
