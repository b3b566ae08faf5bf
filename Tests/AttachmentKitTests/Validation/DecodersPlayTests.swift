import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 27, "refused, although decoders play it": a JPEG with a large ICC profile, an MP3 with
/// junk before its first frame, and an MP3 whose ID3v2 tag runs into its first frame are
/// accepted (with a warning where something was skipped); what decoders do not play stays
/// refused.
@Suite("Files decoders play", .cpuBound)
struct DecodersPlayTests {
  /// The validation of `bytes`, or the error.
  static func validate(_ bytes: [UInt8], as name: String) throws -> Result<Validation, AttachmentError> {
    try DurationTests.validate(bytes, as: name)
  }

  /// `count` non-zero junk bytes that hold no 0xFF (no frame sync can start in them).
  static func junk(_ count: Int) -> [UInt8] {
    (0..<count).map { (index: Int) -> UInt8 in
      let spread: Int = index * 37 + index / 7
      return UInt8(1 + spread % 250)
    }
  }

  @Test("a progressive JPEG with a 420 KB ICC profile in 7 APP2 segments is identified and accepted")
  func largeColourProfile() throws {
    // ImageMagick 6.9.11 ("JPEG 64x48 8-bit sRGB") and libvips 8.14 (`vips copy`) read it.
    // Profile data is opaque: here each chunk starts with FF D9, which looks like an EOI. Before
    // issue 27 the walk over the 64 KiB window, finding the second segment running past it,
    // searched on for a marker, took that one, and refused the file as not valid JPEG.
    var segments: [UInt8] = []
    for index in 0..<7 {
      let payload =
        ProbeFixtures.ascii("ICC_PROFILE") + [0, UInt8(index + 1), 7, 0xFF, 0xD9]
        + testBytes(count: 60_000, seed: UInt64(27 + index))
      segments += [0xFF, 0xE2] + ProbeFixtures.be16(payload.count + 2) + payload
    }
    let plain = ProbeFixtures.jpeg(frameMarker: 0xC2)
    let bytes = Array(plain.prefix(2)) + segments + plain.dropFirst(2)
    // The sniffing window (64 KiB) ends inside the second APP2 segment.
    let window = Array(bytes.prefix(SniffWindow.maximumBytes))
    #expect(MediaProbe.identify(bytes: window)?.format == .jpeg)
    let validation = try Self.validate(bytes, as: "icc-420k.jpg").get()
    #expect(validation.type == .jpeg && validation.width == 64 && validation.height == 48)
    #expect(validation.warnings.isEmpty, "\(validation.warnings)")
  }

  @Test(
    "an MP3 after 300 bytes of junk is accepted with a warning; after 64 KiB, or in another container, not")
  func junkBeforeTheFirstFrame() throws {
    // ffmpeg 5.1 decodes the same layout from a real MP3 (46,080 samples, "detected only with
    // low score of 25"): decoders resynchronise.
    let bytes = Self.junk(300) + ProbeFixtures.mp3(frames: 10)
    #expect(MediaProbe.identify(bytes: bytes)?.format == .mp3)
    let validation = try Self.validate(bytes, as: "junk-300.mp3").get()
    #expect(validation.type == .mp3 && validation.durationSeconds == 10 * 1_152 / 44_100.0)
    #expect(
      validation.warnings.contains { $0.contains("300 bytes before the first MP3 frame are not audio") })

    let far = Self.junk(AudioTags.maximumPadding + 100) + ProbeFixtures.mp3(frames: 10)
    guard case .failure(let error) = try Self.validate(far, as: "junk-far.mp3") else {
      Issue.record("junk past 64 KiB was accepted")
      return
    }
    #expect(error.code == .unsupportedType)
    // A single frame after the junk is not a chain: nothing says these bytes are audio.
    let lone = Self.junk(300) + ProbeFixtures.mp3Header + ProbeFixtures.fill(413) + Self.junk(600)
    #expect(MediaProbe.identify(bytes: lone) == nil)
    // A file that starts like another container (an AVI holding MP3 audio) is not searched.
    let riff = ProbeFixtures.ascii("RIFF") + ProbeFixtures.le32(5_000) + ProbeFixtures.ascii("AVI LIST")
    #expect(MediaProbe.identify(bytes: riff + Self.junk(100) + ProbeFixtures.mp3(frames: 10)) == nil)
  }

  @Test(
    "an MP3 after 60,000 bytes of junk, inside the 64 KiB window, is identified and accepted with a warning")
  func junkNearTheWindowsEnd() throws {
    let bytes = Self.junk(60_000) + ProbeFixtures.mp3(frames: 10)
    // The chain of frames the probe needs starts inside the sniffing window.
    #expect(MediaProbe.identify(bytes: Array(bytes.prefix(SniffWindow.maximumBytes)))?.format == .mp3)
    let validation = try Self.validate(bytes, as: "junk-60000.mp3").get()
    #expect(validation.type == .mp3 && validation.durationSeconds == 10 * 1_152 / 44_100.0)
    #expect(
      validation.warnings.contains { $0.contains("60000 bytes before the first MP3 frame are not audio") },
      "\(validation.warnings)")
  }

  @Test("an MP3 whose ID3v2 tag declares 2 bytes more than it holds resynchronises inside the tag")
  func tagOverrunningTheFirstFrame() throws {
    // ffmpeg 5.1 decodes the same layout from a real MP3 (one frame fewer: it resyncs after the tag).
    var tag = ProbeFixtures.id3(body: 100)
    tag[9] = 102  // the synchsafe size's last byte: 2 more than the body
    let bytes = tag + ProbeFixtures.mp3(frames: 10)
    let validation = try Self.validate(bytes, as: "id3-overrun.mp3").get()
    #expect(validation.type == .mp3 && validation.durationSeconds == 10 * 1_152 / 44_100.0)
    #expect(
      validation.warnings.contains { $0.contains("declares 2 bytes more than it holds") },
      "\(validation.warnings)")
  }
}
