/// A walk over one GIF image's LZW code stream that follows the code table as a decoder
/// builds it, without producing a pixel: what libnsgif (libvips' and browsers' GIF decoder)
/// refuses as "Invalid frame data" is refused here too.
///
/// The codes are read least significant bit first across the data sub-blocks, starting at the
/// minimum code size plus one and widening when the table fills each width, up to 12 bits. A
/// code above the next free table entry, or a first code after a clear that is not a literal,
/// is damage no decoder can get past. A stream that ends without its end code, or bytes after
/// it, decoders tolerate (they show what was decoded), and so does this walk.
///
/// Time is linear in the image data and memory constant: only the table's size is tracked,
/// never its strings.
struct GIFLZW {
  /// The largest code width, and so the table's size (4,096 entries).
  static let maximumWidth = 12

  /// The clear code (2^minimum code size) and the end-of-information code after it.
  private let clear: Int
  /// See `clear`.
  private let end: Int
  /// The code width after a clear.
  private let initialWidth: Int
  /// The current code width, in bits.
  private var width: Int
  /// The next table entry a code may add, and the largest code it may name.
  private var nextFree: Int
  /// Whether the next code is the first after a clear (or the start): it must be a literal.
  private var expectingFirst = true
  /// Whether the end code was read: what follows is ignored.
  private var ended = false
  /// Bits read and not yet consumed, least significant first.
  private var bits: UInt32 = 0
  /// How many of `bits` are valid.
  private var bitCount = 0
  /// Codes read so far, for the message.
  private(set) var codes = 0

  /// The walk for an image whose LZW minimum code size is `minimumCodeSize`; nil when
  /// libnsgif refuses the size (12 or more, or 0).
  init?(minimumCodeSize: Int) {
    guard minimumCodeSize >= 1, minimumCodeSize < Self.maximumWidth else { return nil }
    clear = 1 << minimumCodeSize
    end = clear + 1
    initialWidth = minimumCodeSize + 1
    width = initialWidth
    nextFree = end + 1
  }

  /// Reads the codes of one data sub-block; returns the problem with the first code a
  /// decoder refuses, else nil.
  mutating func feed(_ block: [UInt8]) -> String? {
    guard !ended else { return nil }
    for byte in block {
      bits |= UInt32(byte) << UInt32(bitCount)
      bitCount += 8
      while bitCount >= width {
        let code = Int(bits & (1 << UInt32(width) - 1))
        bits >>= UInt32(width)
        bitCount -= width
        codes += 1
        if let problem = take(code) { return problem }
        if ended { return nil }
      }
    }
    return nil
  }

  /// Follows one code through the table; the problem when a decoder refuses it.
  private mutating func take(_ code: Int) -> String? {
    if expectingFirst {
      // libnsgif skips a run of clear codes; the code after them starts the table.
      if code == clear { return nil }
      guard code < clear else {
        return
          "LZW code \(code) (code \(codes)) follows a clear code, where only a literal below \(clear) may"
      }
      expectingFirst = false
      return nil
    }
    if code == end {
      ended = true
      return nil
    }
    guard code <= nextFree else {
      return "LZW code \(code) (code \(codes)) names a table entry not yet made (the next is \(nextFree))"
    }
    if code == clear {
      width = initialWidth
      nextFree = end + 1
      expectingFirst = true
    } else if nextFree < 1 << Self.maximumWidth {
      // The entry this code adds; the width grows once the entries fill it.
      if nextFree == (1 << width) - 1, width < Self.maximumWidth { width += 1 }
      nextFree += 1
    }
    return nil
  }
}
