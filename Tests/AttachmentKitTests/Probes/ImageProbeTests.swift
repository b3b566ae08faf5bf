import TestTraits
import Testing

@testable import AttachmentKit

/// Identify and inspect on hand-built JPEG, PNG, GIF and TIFF files, valid and broken.
@Suite(.cpuBound)
struct ImageProbeTests {
  /// Identify on a prefix array, inspect on the whole array.
  private func check(_ bytes: [UInt8], as format: ProbedFormat) -> (
    ProbeReport?, Result<ProbeReport, ProbeProblem>
  ) {
    (MediaProbe.identify(bytes: bytes), MediaProbe.inspect(file: FileBytes(bytes: bytes), as: format))
  }

  /// JPEG baseline gives size and passes.
  @Test func jpegBaselineGivesSizeAndPasses() throws {
    let (identified, inspected) = check(ProbeFixtures.jpeg(width: 640, height: 480), as: .jpeg)
    #expect(identified?.format == .jpeg)
    #expect(identified?.width == 640 && identified?.height == 480)
    let report = try inspected.get()
    #expect(report.width == 640 && report.height == 480)
    #expect(report.codecs == ["SOF0"])
    #expect(report.notes.isEmpty)
  }

  /// JPEG progressive with two scans passes.
  @Test func jpegProgressiveWithTwoScansPasses() throws {
    let report = try check(ProbeFixtures.jpeg(frameMarker: 0xC2), as: .jpeg).1.get()
    #expect(report.codecs == ["SOF2"])
  }

  /// JPEG trailing data after EOI is accepted and noted.
  @Test func jpegTrailingDataAfterEOIIsAcceptedAndNoted() throws {
    let report = try check(ProbeFixtures.jpeg(trailing: ProbeFixtures.fill(100) + [1, 2, 3]), as: .jpeg).1
      .get()
    #expect(report.notes.contains { $0.contains("103 bytes after the JPEG EOI") })
  }

  /// JPEG without EOI is truncated.
  @Test func jpegWithoutEOIIsTruncated() {
    let result = check(ProbeFixtures.jpeg(endOfImage: false), as: .jpeg).1
    guard case .failure(.truncated) = result else {
      Issue.record("expected truncated, got \(result)")
      return
    }
  }

  /// JPEG rejects garbage after SOI.
  @Test func jpegRejectsGarbageAfterSOI() throws {
    let app0: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ProbeFixtures.fill(14)
    #expect(MediaProbe.identify(bytes: app0 + ProbeFixtures.fill(300, 0x41)) == nil)
    #expect(MediaProbe.identify(bytes: [0xFF, 0xD8, 0xFF, 0x00, 0x00]) == nil)
    #expect(MediaProbe.identify(bytes: [0xFF, 0xD8, 0xFF]) == nil)
    // A few stray bytes after the APP0 segment are skipped, as libjpeg does, and noted.
    var stray = ProbeFixtures.jpeg()
    stray.insert(contentsOf: [0x00, 0x00, 0x41], at: 20)
    #expect(MediaProbe.identify(bytes: stray)?.width == 64)
    let report = try MediaProbe.inspect(file: FileBytes(bytes: stray), as: .jpeg).get()
    #expect(report.notes.contains { $0.contains("3 bytes short of where the next marker starts") })
  }

  /// JPEG scan before frame header is malformed.
  @Test func jpegScanBeforeFrameHeaderIsMalformed() {
    let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x08] + ProbeFixtures.fill(6) + [0xFF, 0xD9]
    #expect(MediaProbe.identify(bytes: bytes) == nil)
    guard case .failure(.malformed) = MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .jpeg) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// JPEG zero width is refused.
  @Test func jpegZeroWidthIsRefused() {
    #expect(MediaProbe.identify(bytes: ProbeFixtures.jpeg(width: 0)) == nil)
  }

  /// PNG gives size and animation frames.
  @Test func pngGivesSizeAndAnimationFrames() throws {
    let (identified, inspected) = check(ProbeFixtures.png(width: 300, height: 200, frames: 4), as: .png)
    #expect(identified?.width == 300 && identified?.height == 200)
    #expect(identified?.frames == 4)
    let report = try inspected.get()
    #expect(report.width == 300 && report.height == 200 && report.frames == 4)
  }

  /// PNG palette needs PLTE.
  @Test func pngPaletteNeedsPLTE() throws {
    _ = try check(ProbeFixtures.png(depth: 4, colourType: 3), as: .png).1.get()
    var bytes = PNGProbe.signature
    bytes += ProbeFixtures.pngChunk("IHDR", ProbeFixtures.be32(4) + ProbeFixtures.be32(4) + [8, 3, 0, 0, 0])
    bytes += ProbeFixtures.pngChunk("IDAT", [1, 2, 3]) + ProbeFixtures.pngChunk("IEND", [])
    guard case .failure(.malformed) = MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .png) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// PNG rejects bad headers.
  @Test func pngRejectsBadHeaders() {
    var badDepth = ProbeFixtures.png()
    badDepth[24] = 3  // bit depth 3
    #expect(MediaProbe.identify(bytes: badDepth) == nil)
    var zeroWidth = ProbeFixtures.png()
    zeroWidth.replaceSubrange(16..<20, with: [0, 0, 0, 0])
    #expect(MediaProbe.identify(bytes: zeroWidth) == nil)
    var badCRC = ProbeFixtures.png()
    badCRC[29] ^= 0xFF
    #expect(MediaProbe.identify(bytes: badCRC)?.format == .png)
    guard case .failure(.malformed) = MediaProbe.inspect(file: FileBytes(bytes: badCRC), as: .png) else {
      Issue.record("expected malformed for a bad IHDR CRC")
      return
    }
  }

  /// PNG without IEND is truncated.
  @Test func pngWithoutIENDIsTruncated() {
    let bytes = Array(ProbeFixtures.png().dropLast(12))
    guard case .failure(.truncated) = MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .png) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// GIF counts frames and passes.
  @Test func gifCountsFramesAndPasses() throws {
    let (identified, inspected) = check(ProbeFixtures.gif(width: 64, height: 48, frames: 5), as: .gif)
    #expect(identified?.width == 64 && identified?.height == 48)
    let report = try inspected.get()
    #expect(report.frames == 5)
  }

  /// GIF without trailer is truncated.
  @Test func gifWithoutTrailerIsTruncated() {
    let bytes = ProbeFixtures.gif(frames: 2, trailer: false)
    #expect(MediaProbe.identify(bytes: bytes)?.format == .gif)
    guard case .failure(.truncated) = MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .gif) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// GIF rejects text that starts with the magic.
  @Test(arguments: [
    "GIF89a is a format from 1989; everybody knows it. ",
    "GIF89a,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,",
    "GIF89a!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
    "GIF89a is fun;GIF89a is fun;GIF89a is fun;",
    "GIF87a",
  ])
  func gifRejectsTextThatStartsWithTheMagic(text: String) {
    #expect(MediaProbe.identify(bytes: Array(text.utf8)) == nil)
  }

  /// GIF without images is refused.
  @Test func gifWithoutImagesIsRefused() {
    let bytes =
      ProbeFixtures.ascii("GIF89a") + ProbeFixtures.le16(4) + ProbeFixtures.le16(4) + [0, 0, 0, 0x3B]
    #expect(MediaProbe.identify(bytes: bytes) == nil)
  }

  /// TIFF gives size and pages.
  @Test(arguments: [true, false])
  func tiffGivesSizeAndPages(littleEndian: Bool) throws {
    let bytes = ProbeFixtures.tiff(littleEndian: littleEndian, width: 20, height: 10, pages: 3)
    let (identified, inspected) = check(bytes, as: .tiff)
    #expect(identified?.width == 20 && identified?.height == 10)
    let report = try inspected.get()
    #expect(report.width == 20 && report.height == 10 && report.frames == 3)
  }

  /// TIFF strip past the end is truncated, unless it is a single uncompressed strip whose
  /// pixels are all there (libtiff computes its length from the image size: issue 27).
  @Test func tiffStripPastTheEndIsTruncated() throws {
    let overstated = ProbeFixtures.tiff(stripBytes: 10_000)
    let report = try MediaProbe.inspect(file: FileBytes(bytes: overstated), as: .tiff).get()
    #expect(report.notes.contains { $0.contains("overstated strip length") }, "\(report.notes)")
    let cut = Array(overstated.dropLast(1))
    guard case .failure(.truncated(let detail)) = MediaProbe.inspect(file: FileBytes(bytes: cut), as: .tiff)
    else {
      Issue.record("expected truncated")
      return
    }
    #expect(detail.contains("declares 10000 bytes, only 127 remain"), "\(detail)")
  }

  /// TIFF IFD past the end is truncated and loops are malformed.
  @Test func tiffIFDPastTheEndIsTruncatedAndLoopsAreMalformed() {
    var far = ProbeFixtures.tiff()
    far.replaceSubrange(4..<8, with: ProbeFixtures.le32(5_000))
    #expect(MediaProbe.identify(bytes: far)?.format == .tiff)
    guard case .failure(.truncated) = MediaProbe.inspect(file: FileBytes(bytes: far), as: .tiff) else {
      Issue.record("expected truncated")
      return
    }
    var loop = ProbeFixtures.tiff()
    let nextAt = 8 + 2 + 12 * 9
    loop.replaceSubrange(nextAt..<(nextAt + 4), with: ProbeFixtures.le32(8))
    guard case .failure(.malformed) = MediaProbe.inspect(file: FileBytes(bytes: loop), as: .tiff) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// TIFF rejects BigTIFF and IFD offsets below 8.
  @Test func tiffRejectsBigTIFFAndTinyOffsets() {
    #expect(MediaProbe.identify(bytes: [0x49, 0x49, 0x2B, 0, 8, 0, 0, 0] + ProbeFixtures.fill(16)) == nil)
    #expect(MediaProbe.identify(bytes: [0x49, 0x49, 0x2A, 0, 4, 0, 0, 0] + ProbeFixtures.fill(16)) == nil)
  }
}
