/// Overflow-checked arithmetic and small text helpers for sizes and codes read from untrusted
/// bytes. Every function returns nil instead of trapping.
enum ProbeMath {
  /// `a + b`, or nil when either is negative or the sum overflows `Int`.
  static func add(_ a: Int, _ b: Int) -> Int? {
    guard a >= 0, b >= 0 else { return nil }
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? nil : sum
  }

  /// `a + b + c`, or nil when any is negative or a sum overflows `Int`.
  static func add(_ a: Int, _ b: Int, _ c: Int) -> Int? {
    guard let ab = add(a, b) else { return nil }
    return add(ab, c)
  }

  /// `a * b`, or nil when either is negative or the product overflows `Int`.
  static func multiply(_ a: Int, _ b: Int) -> Int? {
    guard a >= 0, b >= 0 else { return nil }
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? nil : product
  }

  /// An unsigned 64-bit size as `Int`, or nil when it does not fit.
  static func int(_ value: UInt64) -> Int? {
    Int(exactly: value)
  }

  /// `value / scale` in seconds, or nil when `scale` is zero or the result is not finite.
  static func seconds(_ value: UInt64, per scale: UInt64) -> Double? {
    guard scale > 0 else { return nil }
    let result = Double(value) / Double(scale)
    return result.isFinite ? result : nil
  }

  /// Four bytes as text (each byte one Latin-1 character), e.g. a box type or brand.
  static func fourCC(_ code: UInt32) -> String {
    var text = ""
    for shift in [24, 16, 8, 0] {
      let byte = UInt8(truncatingIfNeeded: code >> UInt32(shift))
      text.unicodeScalars.append(Unicode.Scalar(byte))
    }
    return text
  }

  /// A four-character code without its trailing spaces (`raw ` → `raw`, `GSM ` → `GSM`).
  static func trimmed(_ code: String) -> String {
    var text = code
    while text.last == " " { text.removeLast() }
    return text
  }

  /// Whether all four bytes of `code` are printable ASCII (0x20...0x7E), as box and chunk
  /// types are.
  static func isPrintable(_ code: UInt32) -> Bool {
    for shift in [24, 16, 8, 0] {
      let byte = UInt8(truncatingIfNeeded: code >> UInt32(shift))
      guard byte >= 0x20, byte <= 0x7E else { return false }
    }
    return true
  }

  /// The four-character code of a literal such as "moov" (its first four UTF-8 bytes).
  static func code(_ text: StaticString) -> UInt32 {
    var value: UInt32 = 0
    text.withUTF8Buffer { bytes in
      for byte in bytes.prefix(4) { value = value << 8 | UInt32(byte) }
    }
    return value
  }

  /// `byte` as two upper-case hex digits, e.g. "D9".
  static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
  }
}
