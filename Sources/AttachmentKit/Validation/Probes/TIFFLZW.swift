/// A walk over one TIFF LZW strip or tile (compression 5) that follows the code table as
/// libtiff's `LZWDecode` builds it and counts the bytes it would decode, without keeping them:
/// a code not yet in the table ("Using code not yet in table"), a code after a clear that is
/// not a literal ("Corrupted LZW table"), or codes that end (at the end code or the end of the
/// data) before the strip's rows are decoded ("Not enough data at scanline") are refused, as
/// libtiff refuses the read and libvips the image.
///
/// The codes are 9 to 12 bits, most significant bit first; the width grows one entry early
/// (at 511, 1,023 and 2,047 free), as TIFF's LZW does. The walk stops once the strip's bytes
/// are decoded (libtiff ignores what follows). Time is linear in the strip's compressed bytes;
/// memory is a table of 4,096 string lengths.
struct TIFFLZW {
  /// The clear and end-of-information codes, and the first free entry.
  private static let clear = 256
  private static let end = 257
  private static let firstFree = 258
  /// The table's size (12-bit codes).
  private static let tableSize = 4_096

  /// The bytes the strip must decode to.
  let expected: Int
  /// The bytes decoded so far.
  private(set) var produced = 0
  /// The length of each entry's string (literals are 1).
  private var lengths = [UInt16](repeating: 1, count: TIFFLZW.tableSize)
  private var width = 9
  private var nextFree = TIFFLZW.firstFree
  /// The previous code, nil at the start and after a clear.
  private var previous: Int?
  private var bits: UInt32 = 0
  private var bitCount = 0
  /// Whether the walk reached a verdict (the rows are decoded, or a problem).
  private(set) var finished = false

  /// The walk of a strip whose rows take `expected` bytes.
  init(expected: Int) {
    self.expected = expected
  }

  /// Whether `first` bytes of a strip start old-style (pre-6.0, least significant bit first)
  /// LZW, which libtiff decodes by other rules: this walk does not judge such a strip.
  static func isOldStyle(_ first: [UInt8]) -> Bool {
    first.count >= 2 && first[0] == 0 && first[1] & 0x01 != 0
  }

  /// Reads the codes in `bytes` (the strip's next compressed bytes); the problem when a code
  /// is refused, else nil.
  mutating func feed(_ bytes: [UInt8]) -> String? {
    guard !finished else { return nil }
    for byte in bytes {
      bits = bits << 8 | UInt32(byte)
      bitCount += 8
      while bitCount >= width {
        bitCount -= width
        let code = Int(bits >> UInt32(bitCount) & (1 << UInt32(width) - 1))
        if let problem = take(code) {
          finished = true
          return problem
        }
        if finished { return nil }
      }
      bits &= (1 << UInt32(bitCount)) - 1
    }
    return nil
  }

  /// At the end of the strip's bytes: the problem when its rows are not all decoded.
  mutating func finish() -> String? {
    guard !finished else { return nil }
    finished = true
    return shortfall
  }

  /// The problem of a strip that decoded to fewer bytes than its rows take.
  private var shortfall: String? {
    produced < expected ? "LZW data decodes to \(produced) of the \(expected) bytes of its rows" : nil
  }

  /// Follows one code; the problem when libtiff refuses it.
  private mutating func take(_ code: Int) -> String? {
    if code == Self.end {
      finished = true
      return shortfall
    }
    if code == Self.clear {
      width = 9
      nextFree = Self.firstFree
      previous = nil
      return nil
    }
    guard let previous else {
      guard code < Self.clear else {
        return "LZW code \(code) follows a clear code, where only a literal may"
      }
      self.previous = code
      return output(1)
    }
    guard code <= nextFree else {
      return "LZW code \(code) is not yet in the table (the next entry is \(nextFree))"
    }
    guard nextFree < Self.tableSize else { return "LZW table overflows without a clear code" }
    let length = lengths[previous] &+ 1
    lengths[nextFree] = length
    nextFree += 1
    if nextFree >= (1 << width) - 1, width < 12 { width += 1 }
    self.previous = code
    return output(Int(lengths[code]))
  }

  /// Counts `count` decoded bytes; finishes once the rows are decoded.
  private mutating func output(_ count: Int) -> String? {
    produced += count
    if produced >= expected { finished = true }
    return nil
  }
}
