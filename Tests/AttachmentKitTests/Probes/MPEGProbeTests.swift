import TestTraits
import Testing

@testable import AttachmentKit

/// Identify and inspect on hand-built MPEG program streams and video elementary streams.
@Suite(.cpuBound)
struct MPEGProbeTests {
  /// The whole-file result for `bytes` as `format`.
  private func inspect(_ bytes: [UInt8], as format: ProbedFormat) -> Result<ProbeReport, ProbeProblem> {
    MediaProbe.inspect(file: FileBytes(bytes: bytes), as: format)
  }

  /// Program stream gives tracks size and duration.
  @Test(arguments: [true, false])
  func programStreamGivesTracksSizeAndDuration(mpeg2: Bool) throws {
    let bytes = ProbeFixtures.programStream(mpeg2: mpeg2)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .mpegProgramStream)
    #expect(identified.durationSeconds == nil)
    let report = try inspect(bytes, as: .mpegProgramStream).get()
    #expect(report.hasVideoTrack && report.hasAudioTrack)
    #expect(report.width == 160 && report.height == 120)
    #expect(report.codecs == [mpeg2 ? "mpeg2-ps" : "mpeg1-system"])
    // Video PTS spread 2 s plus one frame at 25 fps.
    let duration = try #require(report.durationSeconds)
    #expect(abs(duration - 2.04) < 1e-9)
  }

  /// Program stream packet past the end is truncated.
  @Test func programStreamPacketPastTheEndIsTruncated() {
    let bytes = Array(ProbeFixtures.programStream(endCode: false).dropLast(5))
    guard case .failure(.truncated) = inspect(bytes, as: .mpegProgramStream) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// Program stream garbage is skipped and noted.
  @Test func programStreamGarbageIsSkippedAndNoted() throws {
    let packs = ProbeFixtures.programStream(packs: 3, endCode: false)
    let bytes = packs + ProbeFixtures.fill(30, 0x77) + ProbeFixtures.programStream(packs: 2)
    #expect(MediaProbe.identify(bytes: bytes)?.format == .mpegProgramStream)
    let report = try inspect(bytes, as: .mpegProgramStream).get()
    #expect(report.notes.contains { $0.contains("30 bytes of non-packet data") })
  }

  /// Pack header with bad marker bits is refused.
  @Test func packHeaderWithBadMarkerBitsIsRefused() {
    var bytes = ProbeFixtures.programStream()
    bytes[4] &= ~0x04  // MPEG-2 marker bit after SCR[32..30]
    #expect(MediaProbe.identify(bytes: bytes) == nil)
    #expect(MediaProbe.identify(bytes: [0, 0, 1, 0xBA] + ProbeFixtures.fill(20, 0xFF)) == nil)
    // A pack header alone, with nothing after it in the prefix, is too little.
    #expect(MediaProbe.identify(bytes: ProbeFixtures.packHeader(clock: 0)) == nil)
  }

  /// Video stream gives size and duration.
  @Test func videoStreamGivesSizeAndDuration() throws {
    let bytes = ProbeFixtures.videoStream(pictures: 50)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .mpegVideoStream)
    #expect(identified.width == 640 && identified.height == 480 && identified.hasVideoTrack)
    let report = try inspect(bytes, as: .mpegVideoStream).get()
    #expect(report.durationSeconds == 2)
    #expect(report.notes.isEmpty)
  }

  /// Video stream without end code is noted.
  @Test func videoStreamWithoutEndCodeIsNoted() throws {
    let report = try inspect(ProbeFixtures.videoStream(endCode: false), as: .mpegVideoStream).get()
    #expect(report.notes.contains { $0.contains("no sequence end code") })
  }

  /// Video stream without picture is truncated.
  @Test func videoStreamWithoutPictureIsTruncated() {
    guard case .failure(.truncated) = inspect(ProbeFixtures.sequenceHeader(), as: .mpegVideoStream) else {
      Issue.record("expected truncated")
      return
    }
  }

  /// Sequence header with forbidden values is refused.
  @Test func sequenceHeaderWithForbiddenValuesIsRefused() {
    var zeroRate = ProbeFixtures.videoStream()
    zeroRate[7] = 0x10  // frame_rate_code 0
    #expect(MediaProbe.identify(bytes: zeroRate) == nil)
    var noMarker = ProbeFixtures.videoStream()
    noMarker[10] &= ~0x20
    #expect(MediaProbe.identify(bytes: noMarker) == nil)
    var zeroSize = ProbeFixtures.videoStream()
    zeroSize.replaceSubrange(4..<7, with: [0, 0, 0])
    #expect(MediaProbe.identify(bytes: zeroSize) == nil)
    // A valid header followed by something that is not a start code.
    #expect(MediaProbe.identify(bytes: ProbeFixtures.sequenceHeader() + [1, 2, 3, 4, 5]) == nil)
  }

  /// Quantiser matrices are skipped.
  @Test func quantiserMatricesAreSkipped() throws {
    var header = ProbeFixtures.sequenceHeader()
    header[11] |= 0x02  // load_intra_quantiser_matrix: 64 bytes follow
    let bytes = header + ProbeFixtures.fill(64, 0x10) + ProbeFixtures.picture + [0, 0, 1, 0xB7]
    #expect(MediaProbe.identify(bytes: bytes)?.format == .mpegVideoStream)
    _ = try inspect(bytes, as: .mpegVideoStream).get()
  }
}
