import Foundation
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
}
