import Testing

@testable import AttachmentKit

/// Issue 52, item 3: image data whose LZW code stream no decoder gets through is refused,
/// while a stream a decoder tolerates (no end code, bytes after it) is not.
@Suite("LZW code streams a decoder refuses")
struct LZWStreamTests {
  /// `codes` packed least significant bit first, each in the width of its pair.
  static func packLSB(_ codes: [(code: Int, width: Int)]) -> [UInt8] {
    var bytes: [UInt8] = []
    var bits = 0
    var count = 0
    for (code, width) in codes {
      bits |= code << count
      count += width
      while count >= 8 {
        bytes.append(UInt8(truncatingIfNeeded: bits))
        bits >>= 8
        count -= 8
      }
    }
    if count > 0 { bytes.append(UInt8(truncatingIfNeeded: bits)) }
    return bytes
  }

  /// The problem a GIF walk with minimum code size 2 finds in `codes`, or nil.
  static func gifProblem(_ codes: [(code: Int, width: Int)], minimumCodeSize: Int = 2) -> String? {
    guard var walk = GIFLZW(minimumCodeSize: minimumCodeSize) else { return "refused size" }
    return walk.feed(packLSB(codes))
  }

  @Test("GIF: a valid stream, one without its end code, and the table's growth to 4 bits pass")
  func gifValid() {
    // Clear (4), literals, a code for the entry just made (6, the KwKwK case), end (5).
    #expect(Self.gifProblem([(4, 3), (1, 3), (1, 3), (6, 3), (5, 3)]) == nil)
    #expect(Self.gifProblem([(4, 3), (1, 3), (1, 3)]) == nil)
    // Literals fill entries 6 and 7: the width is 4 bits from the third code after the first.
    #expect(Self.gifProblem([(1, 3), (0, 3), (2, 3), (3, 4), (9, 4), (5, 4)]) == nil)
    // Without a leading clear: libnsgif starts the table at the first code.
    #expect(Self.gifProblem([(0, 3), (5, 3)]) == nil)
  }

  @Test("GIF: a code past the next free entry, or a first code that is not a literal, is refused")
  func gifRefused() throws {
    let ahead = try #require(Self.gifProblem([(4, 3), (1, 3), (7, 3)]))
    #expect(ahead.contains("LZW code 7 (code 3) names a table entry not yet made (the next is 6)"))
    let first = try #require(Self.gifProblem([(4, 3), (5, 3)]))
    #expect(first.contains("LZW code 5 (code 2) follows a clear code"))
    #expect(GIFLZW(minimumCodeSize: 12) == nil)
    #expect(GIFLZW(minimumCodeSize: 0) == nil)
    // Past the end code, nothing is read.
    #expect(Self.gifProblem([(4, 3), (1, 3), (5, 3), (7, 3)]) == nil)
  }

  @Test("GIF: the probe refuses an image whose codes run ahead of the table; the fixture passes")
  func gifProbe() throws {
    let gif = ProbeFixtures.gif()
    #expect((try? DecoderOpensTests.inspect(gif, as: .gif).get()) != nil)
    // The fixture's image data is 0x4C 0x01: clear, 1, end. 0x7C makes the second code 7.
    let data = try #require((0..<(gif.count - 1)).first { gif[$0] == 0x4C && gif[$0 + 1] == 0x01 })
    var broken = gif
    broken[data] = 0x7C
    #expect(
      DecoderOpensTests.malformed(DecoderOpensTests.inspect(broken, as: .gif), "GIF image data is damaged"))
  }
}

/// TIFF LZW strips and the IFD fields libtiff refuses (issue 52, item 3).
@Suite("TIFF strips and fields libtiff refuses")
struct TIFFDecodableTests {
  /// `codes` packed most significant bit first, each in the width of its pair.
  static func packMSB(_ codes: [(code: Int, width: Int)]) -> [UInt8] {
    var bytes: [UInt8] = []
    var bits = 0
    var count = 0
    for (code, width) in codes {
      bits = bits << width | code
      count += width
      while count >= 8 {
        bytes.append(UInt8(truncatingIfNeeded: bits >> (count - 8)))
        count -= 8
        bits &= (1 << count) - 1
      }
    }
    if count > 0 { bytes.append(UInt8(truncatingIfNeeded: bits << (8 - count))) }
    return bytes
  }

  /// The problem a TIFF LZW walk of a strip of `expected` bytes finds in `codes`, or nil.
  static func problem(_ codes: [Int], expected: Int) -> String? {
    var walk = TIFFLZW(expected: expected)
    return walk.feed(packMSB(codes.map { ($0, 9) })) ?? walk.finish()
  }

  @Test("LZW: a strip decoding to its rows passes; short, ahead of the table or not a literal is refused")
  func lzw() throws {
    // Clear, 'A', 'B', entry 258 ("AB"), end: 4 bytes.
    #expect(Self.problem([256, 65, 66, 258, 257], expected: 4) == nil)
    // The rows are decoded before the end code: what follows is not read.
    #expect(Self.problem([256, 65, 66, 258, 300], expected: 4) == nil)
    #expect(
      Self.problem([256, 65, 66, 258, 257], expected: 5)?.contains("decodes to 4 of the 5 bytes") == true)
    #expect(Self.problem([256, 65, 66], expected: 5)?.contains("decodes to 2 of the 5 bytes") == true)
    #expect(
      Self.problem([256, 65, 300], expected: 5)?.contains("LZW code 300 is not yet in the table") == true)
    #expect(Self.problem([256, 260], expected: 5)?.contains("follows a clear code") == true)
    #expect(TIFFLZW.isOldStyle([0, 1]) && !TIFFLZW.isOldStyle([0x80, 0]))
  }

  /// The fixture TIFF with entry `index`'s (0: 256, 1: 257, 2: 258, 3: 259, 6: 277) bytes at
  /// `field` (0 tag, 2 type, 4 count, 8 value; little-endian) set to `value`.
  static func patched(_ index: Int, _ field: Int, _ value: Int, into bytes: [UInt8]? = nil) -> [UInt8] {
    var tiff = bytes ?? ProbeFixtures.tiff()
    let at = 10 + 12 * index + field
    tiff[at] = UInt8(value & 0xFF)
    tiff[at + 1] = UInt8(value >> 8 & 0xFF)
    return tiff
  }

  /// Whether `bytes` is refused malformed with `text` in the detail.
  static func refused(_ bytes: [UInt8], _ text: String) -> Bool {
    DecoderOpensTests.malformed(DecoderOpensTests.inspect(bytes, as: .tiff), text)
  }

  @Test("fields: one integer for the geometry tags, a planar configuration of 1 or 2, a decoded compression")
  func fields() {
    #expect((try? DecoderOpensTests.inspect(ProbeFixtures.tiff(), as: .tiff).get()) != nil)
    #expect(Self.refused(Self.patched(0, 4, 3), "tag 256 (ImageWidth) has 3 values where libtiff reads one"))
    #expect(Self.refused(Self.patched(0, 2, 11), "tag 256 (ImageWidth) has field type 11, not an integer"))
    // SamplesPerPixel's entry becomes PlanarConfiguration.
    let planar = Self.patched(6, 0, 284)
    #expect((try? DecoderOpensTests.inspect(planar, as: .tiff).get()) != nil)
    #expect(Self.refused(Self.patched(6, 8, 3, into: planar), "PlanarConfiguration is 3"))
    #expect(Self.refused(Self.patched(3, 8, 13), "compression 13 is not one a decoder implements"))
    for code in [5, 7, 8, 32773, 32946] {
      #expect(TIFFFields.decodedCompressions.contains(code))
    }
    // Three BitsPerSample values for four samples a pixel.
    let samples = Self.patched(6, 8, 4)
    #expect(Self.refused(Self.patched(2, 4, 3, into: samples), "BitsPerSample has 3 values of type 3 for 4"))
  }

  @Test("strip sizes: whole rows per strip, the last strip's rows left, a tile whole")
  func stripSizes() throws {
    let tiff = ProbeFixtures.tiff(width: 10, height: 7, rowsPerStrip: 3)
    let reader = ByteReader(bytes: tiff)
    var fields: [UInt16: TIFFProbe.Entry] = [:]
    for index in 0..<9 {
      let entry = try #require(TIFFProbe.Entry(reader, at: 10 + 12 * index, littleEndian: true))
      fields[entry.tag] = entry
    }
    let layout = TIFFLayout(reader, fields: fields, width: 10, height: 7)
    #expect([0, 1, 2].map { layout.decodedBytes(of: $0, count: 3) } == [30, 30, 10])
  }
}
