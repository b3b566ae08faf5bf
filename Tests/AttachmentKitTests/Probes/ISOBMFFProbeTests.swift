import TestTraits
import Testing

@testable import AttachmentKit

/// Identify and inspect on hand-built MP4 / MOV files: brands, QuickTime without ftyp, tracks,
/// duration, fragments, still-image brands, and broken box trees.
@Suite(.cpuBound)
struct ISOBMFFProbeTests {
  /// The whole-file result for `bytes`.
  private func inspect(_ bytes: [UInt8]) -> Result<ProbeReport, ProbeProblem> {
    MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .isoBMFF)
  }

  /// An MP4 with video and audio gives brands, tracks, size, codecs and duration.
  @Test func mp4WithVideoAndAudio() throws {
    let bytes = ProbeFixtures.movie(audio: true, seconds: 3)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .isoBMFF)
    #expect(identified.majorBrand == "isom")
    #expect(identified.compatibleBrands == ["isom", "iso2", "avc1", "mp41"])
    #expect(!identified.isQuickTime)
    let report = try inspect(bytes).get()
    #expect(report.width == 160 && report.height == 120)
    #expect(report.durationSeconds == 3)
    #expect(report.hasVideoTrack && report.hasAudioTrack)
    #expect(report.codecs == ["avc1", "mp4a"])
    #expect(report.sampleRate == 44_100 && report.channels == 2)
    #expect(!report.isFragmented)
  }

  /// Faststart moov is read by identify.
  @Test func faststartMoovIsReadByIdentify() throws {
    let identified = try #require(MediaProbe.identify(bytes: ProbeFixtures.movie(moovFirst: true)))
    #expect(identified.width == 160 && identified.durationSeconds == 2 && identified.hasVideoTrack)
  }

  /// Audio only MP4 has no video track.
  @Test func audioOnlyMP4HasNoVideoTrack() throws {
    let report = try inspect(
      ProbeFixtures.movie(major: "M4A ", compatible: ["M4A ", "isom"], video: false, audio: true)
    ).get()
    #expect(!report.hasVideoTrack && report.hasAudioTrack)
    #expect(report.majorBrand == "M4A ")
    #expect(report.width == nil)
  }

  /// The QuickTime brand and QuickTime layouts without ftyp (moov first, wide first).
  @Test func quickTimeBrandAndFtyplessLayouts() throws {
    let branded = try #require(
      MediaProbe.identify(bytes: ProbeFixtures.movie(major: "qt  ", compatible: ["qt  "])))
    #expect(branded.isQuickTime)
    for bytes in [
      ProbeFixtures.movie(major: nil, moovFirst: true), ProbeFixtures.movie(major: nil, leadingWide: true),
    ] {
      let identified = try #require(MediaProbe.identify(bytes: bytes))
      #expect(identified.isQuickTime && identified.majorBrand == nil)
      let report = try inspect(bytes).get()
      #expect(report.isQuickTime && report.durationSeconds == 2)
    }
  }

  /// Unknown brand is still ISOBMFF.
  @Test func unknownBrandIsStillISOBMFF() throws {
    let bytes = ProbeFixtures.movie(major: "XAVC", compatible: ["XAVC"])
    #expect(MediaProbe.identify(bytes: bytes)?.majorBrand == "XAVC")
    _ = try inspect(bytes).get()
  }

  /// Still image brands are refused.
  @Test(arguments: ["heic", "mif1", "avif", "msf1"])
  func stillImageBrandsAreRefused(brand: String) {
    let bytes =
      ProbeFixtures.ftyp(brand, [brand, "mif1"]) + ProbeFixtures.fullBox("meta", ProbeFixtures.fill(8))
      + ProbeFixtures.box("mdat", ProbeFixtures.fill(10))
    #expect(MediaProbe.identify(bytes: bytes) == nil)
    guard case .failure(.malformed) = inspect(bytes) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// Ftypless needs a plausible second box.
  @Test func ftyplessNeedsAPlausibleSecondBox() {
    #expect(
      MediaProbe.identify(bytes: ProbeFixtures.box("free", ProbeFixtures.fill(8)) + [1, 2, 3, 4, 5, 6, 7, 8])
        == nil)
    #expect(MediaProbe.identify(bytes: ProbeFixtures.box("free", ProbeFixtures.fill(8))) == nil)
    #expect(
      MediaProbe.identify(
        bytes: ProbeFixtures.box("abcd", ProbeFixtures.fill(8)) + ProbeFixtures.box("moov", [])) == nil)
    // An mdat running past the prefix is enough on its own.
    let bigMdat = ProbeFixtures.be32(10_000_000) + ProbeFixtures.ascii("mdat") + ProbeFixtures.fill(100)
    #expect(MediaProbe.identify(bytes: bigMdat)?.isQuickTime == true)
  }

  /// Last box past the end is truncated.
  @Test func lastBoxPastTheEndIsTruncated() {
    let bytes = Array(ProbeFixtures.movie(moovFirst: true).dropLast(10))
    guard case .failure(.truncated) = inspect(bytes) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// Missing moov is truncated when only movie boxes are present.
  @Test func missingMoovIsTruncatedWhenOnlyMovieBoxesArePresent() {
    let bytes = ProbeFixtures.ftyp("isom", ["isom"]) + ProbeFixtures.box("mdat", ProbeFixtures.fill(20))
    guard case .failure(.truncated) = inspect(bytes) else {
      Issue.record("expected truncated")
      return
    }
    let other = ProbeFixtures.ftyp("isom", ["isom"]) + ProbeFixtures.box("meta", ProbeFixtures.fill(20))
    guard case .failure(.malformed) = inspect(other) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// Trailing stray bytes are truncated.
  @Test func trailingStrayBytesAreTruncated() {
    let bytes = ProbeFixtures.movie() + [0, 0, 0]
    guard case .failure(.truncated) = inspect(bytes) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// Chunk offset past the end is truncated.
  @Test func chunkOffsetPastTheEndIsTruncated() {
    var bytes = ProbeFixtures.movie()
    // The stco entry is the last 4 bytes of the (only) track's stbl, at the end of the file.
    let at = bytes.count - 4
    bytes.replaceSubrange(at..<(at + 4), with: ProbeFixtures.be32(1_000_000))
    guard case .failure(.truncated) = inspect(bytes) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// Child running past its parent is malformed.
  @Test func childRunningPastItsParentIsMalformed() {
    let moov = ProbeFixtures.box(
      "moov", ProbeFixtures.be32(500) + ProbeFixtures.ascii("mvhd") + ProbeFixtures.fill(20))
    let bytes = ProbeFixtures.ftyp("isom", ["isom"]) + moov
    guard case .failure(.malformed) = inspect(bytes) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// A 64-bit largesize and a version 1 mvhd are read.
  @Test func largesizeAndVersion1HeadersAreRead() throws {
    let mdat =
      ProbeFixtures.be32(1) + ProbeFixtures.ascii("mdat") + ProbeFixtures.be64(16 + 8) + ProbeFixtures.fill(8)
    let moov = ProbeFixtures.box("moov", ProbeFixtures.mvhd(timescale: 600, duration: 600 * 7, version: 1))
    let report = try inspect(ProbeFixtures.ftyp("mp42", ["mp42"]) + mdat + moov).get()
    #expect(report.durationSeconds == 7)
  }

  /// Fragmented duration is summed from fragments.
  @Test func fragmentedDurationIsSummedFromFragments() throws {
    let bytes = ProbeFixtures.fragmentedMovie(fragments: 3)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.isFragmented)
    #expect(identified.durationSeconds == nil)
    let report = try inspect(bytes).get()
    #expect(report.isFragmented)
    // 10 samples × 1024 + 2 × 10 samples × 512 (trex default) = 20480 at 15360 Hz.
    let duration = try #require(report.durationSeconds)
    #expect(abs(duration - 20_480.0 / 15_360.0) < 1e-9)
  }

  /// Fragmented duration prefers mehd.
  @Test func fragmentedDurationPrefersMehd() throws {
    let report = try inspect(ProbeFixtures.fragmentedMovie(withMehd: true)).get()
    // mehd is in the movie timescale (1000): 46080 / 1000.
    #expect(report.durationSeconds == 46.08)
  }

  /// Fragmented trun longer than its box is malformed.
  @Test func fragmentedTrunLongerThanItsBoxIsMalformed() {
    var bytes = ProbeFixtures.fragmentedMovie(fragments: 1)
    // Find the trun's sample count (10) and claim a million samples.
    let pattern = ProbeFixtures.ascii("trun") + [0, 0, 1, 0] + ProbeFixtures.be32(10)
    guard
      let at = (0..<(bytes.count - pattern.count)).first(where: {
        Array(bytes[$0..<($0 + pattern.count)]) == pattern
      })
    else {
      Issue.record("no trun in the fixture")
      return
    }
    bytes.replaceSubrange((at + 8)..<(at + 12), with: ProbeFixtures.be32(1_000_000))
    guard case .failure(.malformed) = inspect(bytes) else {
      Issue.record("expected malformed")
      return
    }
  }

  /// Bytes that are not boxes are refused.
  @Test func nonBoxBytesAreRefused() {
    #expect(MediaProbe.identify(bytes: ProbeFixtures.ascii("<html><body>hello</body></html>")) == nil)
    #expect(MediaProbe.identify(bytes: [0, 0, 0, 4] + ProbeFixtures.ascii("ftyp")) == nil)
    #expect(
      MediaProbe.identify(bytes: [0, 0, 0, 1] + ProbeFixtures.ascii("ftyp") + ProbeFixtures.fill(8)) == nil)
  }
}
