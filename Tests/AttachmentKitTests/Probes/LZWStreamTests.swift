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
