import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// AIFF and AIFF-C, accepted as they are (issue #42, item 5): the probe on the samples ffmpeg
/// wrote, and on those samples edited by hand; the validator's answer for each.
@Suite(.cpuBound)
struct AIFFProbeTests {
  /// A sample's bytes.
  static func bytes(_ file: String) throws -> [UInt8] { try Samples.bytes(file) }

  /// The offset of chunk `id` in an AIFF file's bytes (after the 12-byte form header).
  static func chunk(_ id: String, in bytes: [UInt8]) -> Int? {
    var position = 12
    while position + 8 <= bytes.count {
      let size = bytes[position + 4..<position + 8].reduce(0) { $0 << 8 | Int($1) }
      if Array(bytes[position..<position + 4]) == Array(id.utf8) { return position }
      position += 8 + size + (size & 1)
    }
    return nil
  }

  @Test(
    "every AIFF and AIFF-C form iOS plays is accepted as aiff, public.aiff-audio, with its duration and codec",
    arguments: [
      ("aiff-pcm.aiff", "lpcm"), ("aifc-sowt.aifc", "lpcm"), ("aifc-fl32.aifc", "lpcm"),
      ("aifc-fl64.aifc", "lpcm"),
      ("aifc-ulaw.aifc", "ulaw"), ("aifc-alaw.aifc", "alaw"), ("aifc-ima4.aifc", "ima4"),
    ])
  func accepted(_ file: String, codec: String) throws {
    let validation = try Validator().validate(file: Samples.path(file))
    #expect(validation.type == .aiff && validation.type.uti == "public.aiff-audio")
    #expect(validation.type.fileExtension == "aiff" && validation.type.isInApplesTable)
    #expect(validation.codecs == [codec])
    #expect(
      abs((validation.durationSeconds ?? 0) - 1.0) < 0.01, "\(String(describing: validation.durationSeconds))"
    )
    #expect(validation.warnings.isEmpty, "\(validation.warnings)")
  }

  @Test("the 80-bit sample rate: 8 kHz, 44.1 kHz and 48 kHz, and no NaN or zero")
  func extendedRates() {
    #expect(AIFFProbe.extended(exponent: 0x400B, mantissa: 0xFA00_0000_0000_0000) == 8_000)
    #expect(AIFFProbe.extended(exponent: 0x400E, mantissa: 0xAC44_0000_0000_0000) == 44_100)
    #expect(AIFFProbe.extended(exponent: 0x400E, mantissa: 0xBB80_0000_0000_0000) == 48_000)
    #expect(AIFFProbe.extended(exponent: 0x7FFF, mantissa: 1).isNaN)
    #expect(AIFFProbe.extended(exponent: 0, mantissa: 0) == 0)
  }

  @Test("cut inside its sound data: truncated; a sample rate of zero: not AIFF; no frame: nothing to play")
  func refused() throws {
    let whole = try Self.bytes("aiff-pcm.aiff")
    #expect(try Self.refusal(Array(whole.prefix(whole.count - 100)))?.error.code == .truncated)

    let common = try #require(Self.chunk("COMM", in: whole))
    var silentRate = whole
    for index in common + 16..<common + 26 { silentRate[index] = 0 }
    // Not an AIFF at all: its first bytes' COMM is already invalid
    #expect(try Self.refusal(silentRate)?.error.code == .unsupportedType)

    var noFrames = whole
    for index in common + 10..<common + 14 { noFrames[index] = 0 }
    #expect(try Self.refusal(noFrames)?.error.code == .empty)
  }

  @Test("an AIFF-C compression type iOS does not decode ('GSM ') is unsupported_codec, naming it")
  func unknownCompression() throws {
    var bytes = try Self.bytes("aifc-ima4.aifc")
    let common = try #require(Self.chunk("COMM", in: bytes))
    bytes.replaceSubrange(common + 26..<common + 30, with: Array("GSM ".utf8))
    let refusal = try Self.refusal(bytes)
    #expect(refusal?.error.code == .unsupportedCodec, "\(String(describing: refusal?.error))")
    #expect(refusal?.facts.codecs == ["GSM"])
  }

  @Test(
    "an odd-sized chunk is followed by its pad byte: a 3-byte NAME chunk before COMM and SSND is walked past")
  func oddChunkPadded() throws {
    // Given the PCM sample with a NAME chunk of 3 bytes ("abc") and its pad byte put first
    var bytes = try Self.bytes("aiff-pcm.aiff")
    let name = Array("NAME".utf8) + [0, 0, 0, 3] + Array("abc".utf8) + [0]
    bytes.insert(contentsOf: name, at: 12)
    let formSize = bytes[4..<8].reduce(0) { $0 << 8 | Int($1) } + name.count
    bytes.replaceSubrange(4..<8, with: (0..<4).map { UInt8(truncatingIfNeeded: formSize >> (24 - 8 * $0)) })
    #expect(Self.chunk("COMM", in: bytes) != nil)

    // Then it is accepted as the sample is, with its duration
    let refusal = try Self.refusal(bytes)
    #expect(refusal == nil, "\(String(describing: refusal?.error))")
    let scratch = try ScratchDirectory("aiff-odd")
    defer { scratch.remove() }
    try writeTestFile(Data(bytes), to: scratch.path + "/a.aiff")
    let validation = try Validator().validate(file: scratch.path + "/a.aiff")
    #expect(validation.type == .aiff && validation.codecs == ["lpcm"])
    #expect(abs((validation.durationSeconds ?? 0) - 1.0) < 0.01)
  }

  /// The validator's refusal of `bytes` (written to a scratch file), or `nil` when it accepts them.
  static func refusal(_ bytes: [UInt8]) throws -> Refusal? {
    let scratch = try ScratchDirectory("aiff")
    defer { scratch.remove() }
    try writeTestFile(Data(bytes), to: scratch.path + "/a.aiff")
    do {
      _ = try Validator().judge(file: scratch.path + "/a.aiff")
      return nil
    } catch {
      return error
    }
  }
}
