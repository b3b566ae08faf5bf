/// A PNG's image data (the IDAT chunks' zlib stream, in order) inflated while the chunks are
/// walked, to the size IHDR implies: what libpng and ffmpeg refuse ("inflate returned error
/// -3", "Not enough image data") is refused here too.
///
/// Memory is constant: the compressed bytes are read 64 KiB at a time and the inflated bytes
/// are counted in a 256 KiB buffer, never kept. Inflating stops at the size IHDR implies (what
/// follows, decoders ignore too). An image whose rows exceed ``maximumInflatedBytes`` is not
/// inflated (the pixel limits refuse it, or a decoder takes the time anyway); neither is one
/// when zlib cannot be loaded.
struct PNGImageData {
  /// The most filtered row bytes inflated: 256 MiB (a 24 MP RGBA image at 16 bits is 192 MB).
  static let maximumInflatedBytes = 256 * 1_024 * 1_024
  /// The compressed bytes read at a time.
  static let pieceSize = 65_536

  /// The bytes the filtered rows take, from IHDR.
  let expected: Int
  private let counter: InflateCounter?
  private var done = false

  /// The state for the PNG `reader` holds (its IHDR already checked); nil when its rows are
  /// over ``maximumInflatedBytes`` or zlib cannot be loaded.
  init?(_ reader: ByteReader) {
    guard let width = reader.u32be(16), let height = reader.u32be(20), let depth = reader.u8(24),
      let colour = reader.u8(25), let interlace = reader.u8(28),
      let expected = Self.filteredBytes(
        width: Int(width), height: Int(height), depth: Int(depth), colour: colour, interlaced: interlace == 1),
      expected <= Self.maximumInflatedBytes,
      let counter = InflateCounter(limit: expected)
    else { return nil }
    self.expected = expected
    self.counter = counter
  }

  /// The bits one pixel takes: the bit depth times the samples of the colour type (0 grey,
  /// 2 RGB, 3 palette, 4 grey and alpha, 6 RGBA); nil for an unknown colour type.
  static func bitsPerPixel(depth: Int, colour: UInt8) -> Int? {
    let samples: [UInt8: Int] = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4]
    return samples[colour].map { $0 * depth }
  }

  /// The bytes of the filtered image (a filter byte and the packed pixels per row, per Adam7
  /// pass when interlaced; an empty pass has no row), or nil on overflow or a bad colour type.
  static func filteredBytes(width: Int, height: Int, depth: Int, colour: UInt8, interlaced: Bool) -> Int? {
    guard let bits = bitsPerPixel(depth: depth, colour: colour) else { return nil }
    func rows(_ columns: Int, _ count: Int) -> Int? {
      guard columns > 0, count > 0 else { return 0 }
      guard let rowBits = ProbeMath.multiply(columns, bits),
        let size = ProbeMath.multiply(rowBits / 8 + (rowBits % 8 == 0 ? 0 : 1) + 1, count)
      else { return nil }
      return size
    }
    guard interlaced else { return rows(width, height) }
    // Adam7: (x start, y start, x step, y step) of each pass.
    let passes = [
      (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]
    var total = 0
    for (x, y, dx, dy) in passes {
      let columns = width > x ? (width - x + dx - 1) / dx : 0
      let lines = height > y ? (height - y + dy - 1) / dy : 0
      guard let size = rows(columns, lines), let sum = ProbeMath.add(total, size) else { return nil }
      total = sum
    }
    return total
  }

  /// Inflates one IDAT chunk's `length` data bytes at `offset` (inside the file); returns the
  /// problem when zlib refuses them before the image is complete, else nil.
  mutating func add(_ reader: ByteReader, at offset: Int, length: Int) -> String? {
    guard !done, let counter else { return nil }
    var position = offset
    let end = offset + length
    while position < end {
      let count = min(Self.pieceSize, end - position)
      // A read fails only once the walk is stopped; the caller sees that in `reader.stop`.
      guard let piece = reader.bytes(at: position, count: count) else { return nil }
      switch counter.feed(piece) {
      case .needsInput:
        break
      case .reachedLimit:
        done = true
        return nil
      case .ended:
        done = true
        return shortfall(counter.produced)
      case .failed(let message):
        return
          "PNG image data does not inflate after \(counter.produced) of \(expected) bytes (zlib: \(message))"
      }
      position += count
    }
    return nil
  }

  /// At IEND: the problem when the image data ended before the rows IHDR implies, else nil.
  mutating func finish() -> String? {
    guard !done, let counter else { return nil }
    done = true
    return shortfall(counter.produced)
  }

  /// The problem of image data that inflated to `produced` bytes, when that is short.
  private func shortfall(_ produced: Int) -> String? {
    guard produced < expected else { return nil }
    return "PNG image data inflates to \(produced) bytes, fewer than the \(expected) its IHDR implies"
  }
}
