import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 27, item 9: MPEG audio Layers I and II. Apple's list of iOS audio playback formats
/// (Multimedia Programming Guide, "Using Audio") names "MP3 (MPEG-1 audio layer 3)" and no
/// other layer, so a Layer I or II file is refused for its codec, naming the layer; before
/// issue 27 it was refused as "not any accepted format" while the README listed "MPEG-1/2
/// audio" as decoded. ffmpeg 5.1 decodes both (`mp1`, `mp2`): the frames are valid.
@Suite("MPEG audio layers", .cpuBound)
struct MPEGLayerTests {
  /// `frames` frames of `header`, each `length` bytes.
  static func stream(_ header: [UInt8], length: Int, frames: Int = 10) -> [UInt8] {
    (0..<frames).flatMap { _ in header + ProbeFixtures.fill(length - 4, 0x55) }
  }

  @Test(
    "a Layer I or II file is identified and refused with unsupported_codec naming the layer",
    arguments: [
      // MPEG-1 Layer II, 160 kbit/s, 44.1 kHz: 144 × 160,000 / 44,100 = 522 bytes.
      ([0xFF, 0xFD, 0x90, 0x44], 522, "mp2", "MPEG audio Layer II"),
      // MPEG-1 Layer I, 288 kbit/s, 44.1 kHz: (12 × 288,000 / 44,100) × 4 = 312 bytes.
      ([0xFF, 0xFF, 0x90, 0x44], 312, "mp1", "MPEG audio Layer I"),
    ] as [([UInt8], Int, String, String)])
  func layers(_ header: [UInt8], _ length: Int, _ codec: String, _ name: String) throws {
    let bytes = Self.stream(header, length: length)
    let report = try #require(MediaProbe.identify(bytes: bytes))
    #expect(report.format == .mp3 && report.streams == [MediaStream(kind: .audio, codec: codec)])
    guard case .failure(let error) = try DurationTests.validate(bytes, as: "layer.mp3") else {
      Issue.record("a Layer I/II file was accepted")
      return
    }
    #expect(error.code == .unsupportedCodec && error.isRejection)
    #expect(error.message == "The audio is \(name), which iOS does not decode.")
    #expect(error.detected == "audio/mpeg; codecs=\"\(codec)\"")
  }

  @Test("frames of another layer do not chain: a lone Layer II frame before Layer III ones is junk")
  func layersDoNotMix() throws {
    let mixed = Self.stream([0xFF, 0xFD, 0x90, 0x44], length: 522, frames: 1) + ProbeFixtures.mp3(frames: 3)
    #expect(MediaProbe.identify(bytes: mixed)?.streams.first?.codec == "mp3")
    let layer3 = try DurationTests.validate(ProbeFixtures.mp3(frames: 10), as: "layer3.mp3").get()
    #expect(layer3.codecs == ["mp3"])
  }
}
