/// Base64url without padding (RFC 4648 §5), the encoding a signed proxy path carries its URL in,
/// so the path holds no `/`, `+` or `=` and CDNs key on it unchanged.
public enum Base64URL {
  private static let alphabet: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  private static let values: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
    return table
  }()

  /// The bytes encoded, without padding.
  public static func encode(_ bytes: some Collection<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count * 4 + 2) / 3)
    var iterator = bytes.makeIterator()
    while let first = iterator.next() {
      let second = iterator.next()
      let third = iterator.next()
      let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
      out.append(alphabet[Int(group >> 18 & 63)])
      out.append(alphabet[Int(group >> 12 & 63)])
      if second != nil { out.append(alphabet[Int(group >> 6 & 63)]) }
      if third != nil { out.append(alphabet[Int(group & 63)]) }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The bytes `text` encodes, or `nil` when it holds a character outside the alphabet, padding,
  /// an impossible length (one character left over), or non-zero bits past the last byte (so
  /// each byte string has exactly one encoding, and a changed path never decodes to the same URL).
  public static func decode(_ text: some StringProtocol) -> [UInt8]? {
    decode(bytes: text.utf8)
  }

  /// The bytes that the UTF-8 text `characters` encodes; `nil` as for ``decode(_:)``.
  public static func decode(bytes characters: some Collection<UInt8>) -> [UInt8]? {
    guard characters.count % 4 != 1 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(characters.count * 3 / 4)
    var accumulator: UInt32 = 0
    var bits = 0
    for character in characters {
      let value = values[Int(character)]
      guard value != 0xFF else { return nil }
      accumulator = accumulator << 6 | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        accumulator &= (1 << UInt32(bits)) - 1
      }
    }
    guard accumulator == 0 else { return nil }
    return out
  }
}
