import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 27, items 5 and 11: a TIFF's strip geometry is checked the way libtiff computes it,
/// and a strip length past the end of the file is named for what it is. Each verdict is the
/// one ImageMagick 6.9.11 and libvips 8.14 (both on libtiff 4.5) give the same file.
@Suite("TIFF strip geometry", .cpuBound)
struct TIFFGeometryTests {
  /// The refusal of `bytes`, or nil (recorded as an issue) when they are accepted.
  static func refusal(_ bytes: [UInt8], as name: String) throws -> AttachmentError? {
    try NothingPlaysTests.refusal(bytes, as: name)
  }

  @Test("a RowsPerStrip whose strip count overflows, or of 0, is refused; a large one that fits is read")
  func rowsPerStrip() throws {
    // 100 rows, RowsPerStrip 2^32 - 16: libtiff's (100 + rows - 1) overflows 32 bits, so it
    // computes 0 strips: "Cannot handle zero number of strips" (both decoders fail).
    let overflow = ProbeFixtures.tiff(height: 100, rowsPerStrip: 0xFFFF_FFF0)
    let error = try #require(try Self.refusal(overflow, as: "rows-overflow.tiff"))
    #expect(error.code == .unsupportedType && error.message.contains("overflows the strip count"), "\(error)")
    // RowsPerStrip 0: 'Bad value 0 for "RowsPerStrip" tag' (both fail).
    let zero = try #require(try Self.refusal(ProbeFixtures.tiff(rowsPerStrip: 0), as: "rows-zero.tiff"))
    #expect(zero.message.contains("RowsPerStrip is 0"), "\(zero)")
    // 8 rows with the same RowsPerStrip: one strip, which both decoders read.
    let fits = try DurationTests.validate(
      ProbeFixtures.tiff(height: 8, rowsPerStrip: 0xFFFF_FFF0), as: "fits.tiff")
    #expect(try fits.get().type == .tiff)
  }

  @Test(
    "a first image without PhotometricInterpretation, or RGB/YCbCr with one sample, is refused, as libvips refuses it"
  )
  func photometricRequired() throws {
    // libvips 8.14: "tiff2vips: required field 262 missing" (Pillow's 10ct_32bit_128.tiff).
    let missing = ProbeFixtures.tiff(photometric: false)
    let error = try #require(try Self.refusal(missing, as: "no-photometric.tiff"))
    #expect(error.code == .unsupportedType)
    #expect(error.message.contains("no PhotometricInterpretation (tag 262)"), "\(error.message)")
    let present = try DurationTests.validate(ProbeFixtures.tiff(), as: "photometric.tiff")
    #expect(try present.get().type == .tiff)
    // YCbCr with one sample a pixel (Pillow's old-style-jpeg-compression-no-samplesperpixel.tif:
    // SamplesPerPixel left out): libvips fails on every tile.
    let ycbcr = try #require(
      try Self.refusal(ProbeFixtures.tiff(photometricValue: 6), as: "ycbcr-one-sample.tiff"))
    #expect(
      ycbcr.message.contains("YCbCr needs 3 samples a pixel; SamplesPerPixel says 1"), "\(ycbcr.message)")
  }

  @Test("fewer strips than the rows need is refused")
  func tooFewStrips() throws {
    // 8 rows of 2 need 4 strips; the IFD lists 1. libvips refuses the file; ImageMagick warns
    // 'Incorrect count for "StripOffsets"; tag ignored'.
    let error = try #require(try Self.refusal(ProbeFixtures.tiff(rowsPerStrip: 2), as: "few-strips.tiff"))
    #expect(error.code == .unsupportedType)
    #expect(error.message.contains("lists 1 of the 4 strips its 16×8 geometry needs"), "\(error.message)")
  }

  @Test(
    "an overstated length of a single uncompressed strip shows (warning); a compressed or cut one does not")
  func overstatedStripLength() throws {
    // Both decoders: 'Bogus "StripByteCounts" field, ignoring and calculating from
    // imagelength', and the image shows. Before issue 27 this was refused as truncated.
    let overstated = ProbeFixtures.tiff(stripBytes: 10_000)
    let validation = try DurationTests.validate(overstated, as: "overstated.tiff").get()
    #expect(
      validation.warnings.contains { $0.contains("an overstated strip length") }, "\(validation.warnings)")
    // The same strip one pixel short: cut, and said so with both figures.
    let cut = try #require(try Self.refusal(Array(overstated.dropLast(1)), as: "cut.tiff"))
    #expect(cut.code == .truncated && cut.isRejection)
    #expect(
      cut.message.contains(
        "declares 10000 bytes, only 127 remain (an overstated strip length, or a file cut short)"))
    // A compressed strip declared longer than the file: "Read error ... got 294 bytes,
    // expected 5031" in both decoders (LZW, ImageMagick's own output with the count raised).
    var compressed = ProbeFixtures.tiff(stripBytes: 10_000)
    let compressionAt = 8 + 2 + 12 * 3 + 8  // the value of entry 259 (the fourth)
    compressed.replaceSubrange(compressionAt..<compressionAt + 2, with: ProbeFixtures.le16(5))
    let lzw = try #require(try Self.refusal(compressed, as: "lzw-overstated.tiff"))
    #expect(lzw.code == .truncated)
  }
}
