import TestTraits
import Testing

@testable import AttachmentKit

/// Identify and inspect on hand-built MP3, ADTS, WAV and CAF files, and the ID3v2 length.
@Suite(.cpuBound)
struct AudioProbeTests {
  /// The whole-file result for `bytes` as `format`.
  private func inspect(_ bytes: [UInt8], as format: ProbedFormat) -> Result<ProbeReport, ProbeProblem> {
    MediaProbe.inspect(file: FileBytes(bytes: bytes), as: format)
  }

  /// Whether `result` is a truncation failure.
  private func isTruncated(_ result: Result<ProbeReport, ProbeProblem>) -> Bool {
    if case .failure(.truncated) = result { return true }
    return false
  }

  /// ID3v2 length reads the synchsafe size and footer.
  @Test func id3v2LengthReadsTheSynchsafeSizeAndFooter() {
    let tag = ProbeFixtures.id3(body: 300)
    #expect(tag.withUnsafeBytes { MediaProbe.id3v2Length($0) } == 310)
    var footer = tag
    footer[3] = 4
    footer[5] = 0x10
    #expect(footer.withUnsafeBytes { MediaProbe.id3v2Length($0) } == 320)
    var notSynchsafe = tag
    notSynchsafe[8] = 0x80
    #expect(notSynchsafe.withUnsafeBytes { MediaProbe.id3v2Length($0) } == 0)
    #expect([UInt8]("ID3".utf8).withUnsafeBytes { MediaProbe.id3v2Length($0) } == 0)
    #expect([UInt8]().withUnsafeBytes { MediaProbe.id3v2Length($0) } == 0)
  }

  /// MP3 with tag gives parameters and duration.
  @Test func mp3WithTagGivesParametersAndDuration() throws {
    let bytes = ProbeFixtures.mp3(frames: 20, tag: 500, id3v1: true)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .mp3 && identified.hasAudioTrack)
    #expect(identified.sampleRate == 44_100 && identified.channels == 2)
    let report = try inspect(bytes, as: .mp3).get()
    let duration = try #require(report.durationSeconds)
    #expect(abs(duration - 20 * 1_152 / 44_100.0) < 1e-9)
  }

  /// MP3 Xing frame gives duration to identify.
  @Test func mp3XingFrameGivesDurationToIdentify() throws {
    let bytes = ProbeFixtures.mp3(frames: 11, xing: true)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    let expected = 10 * 1_152 / 44_100.0
    #expect(abs((identified.durationSeconds ?? 0) - expected) < 1e-9)
    let report = try inspect(bytes, as: .mp3).get()
    #expect(abs((report.durationSeconds ?? 0) - expected) < 1e-9)
  }

  /// MP3 needs two chained frames.
  @Test func mp3NeedsTwoChainedFrames() {
    let one = ProbeFixtures.mp3Header + ProbeFixtures.fill(600, 0x11)
    #expect(MediaProbe.identify(bytes: one) == nil)
    #expect(MediaProbe.identify(bytes: ProbeFixtures.mp3Header + ProbeFixtures.fill(413)) != nil)
    // Layer II, free bitrate, reserved sample rate, reserved version.
    for header: [UInt8] in [
      [0xFF, 0xFD, 0x90, 0x44], [0xFF, 0xFB, 0x00, 0x44], [0xFF, 0xFB, 0x9C, 0x44], [0xFF, 0xEB, 0x90, 0x44],
    ] {
      let bytes = (0..<3).flatMap { _ in header + ProbeFixtures.fill(413) }
      #expect(MediaProbe.identify(bytes: bytes) == nil)
    }
  }

  /// Bytes after a tag the caller skipped, starting with the tag's zero padding, identify.
  @Test func mp3AfterASkippedTagWithPaddingIsIdentified() throws {
    let bytes = ProbeFixtures.mp3(frames: 4, tag: 10)
    let tag = bytes.withUnsafeBytes { MediaProbe.id3v2Length($0) }
    #expect(tag == 20)
    // The fixture's tag body is zeros: what follows the header looks like padding.
    let afterHeader = Array(bytes[10...])
    #expect(MediaProbe.identify(bytes: afterHeader)?.format == .mp3)
    #expect(MediaProbe.identify(bytes: Array(bytes[tag...]))?.format == .mp3)
  }

  /// MP3 tag running past the prefix is not identified but the file is.
  @Test func mp3TagRunningPastThePrefixIsNotIdentifiedButTheFileIs() throws {
    let bytes = ProbeFixtures.mp3(frames: 10, tag: 70_000)
    #expect(MediaProbe.identify(bytes: Array(bytes.prefix(65_536))) == nil)
    #expect(MediaProbe.identify(file: FileBytes(bytes: bytes))?.format == .mp3)
  }

  /// MP3 cut frame is truncated and garbage is noted.
  @Test func mp3CutFrameIsTruncatedAndGarbageIsNoted() throws {
    #expect(isTruncated(inspect(Array(ProbeFixtures.mp3().dropLast(100)), as: .mp3)))
    #expect(isTruncated(inspect(Array(ProbeFixtures.mp3().dropLast(415)), as: .mp3)))
    let messy = ProbeFixtures.mp3(frames: 5) + ProbeFixtures.fill(50, 0x07) + ProbeFixtures.mp3(frames: 5)
    let report = try inspect(messy, as: .mp3).get()
    #expect(report.notes.contains { $0.contains("50 bytes") })
    // Junk between frames may not be most of the file...
    let mostlyJunk =
      ProbeFixtures.mp3(frames: 2) + ProbeFixtures.fill(5_000, 0x07) + ProbeFixtures.mp3(frames: 2)
    guard case .failure(.malformed) = inspect(mostlyJunk, as: .mp3) else {
      Issue.record("expected malformed")
      return
    }
    // ...but bytes after the last frame, from which no frame resynchronises, are only noted,
    // however many: decoders stop at the last frame.
    let trailing = try inspect(ProbeFixtures.mp3(frames: 2) + ProbeFixtures.fill(5_000, 0x07), as: .mp3).get()
    #expect(trailing.notes.contains { $0.contains("5000 bytes after the last MP3 frame") })
  }

  /// ADTS gives parameters and duration.
  @Test func adtsGivesParametersAndDuration() throws {
    let bytes = ProbeFixtures.adts(frames: 43)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .adts && identified.sampleRate == 44_100 && identified.channels == 1)
    #expect(identified.codecs == ["aac-lc"])
    let report = try inspect(bytes, as: .adts).get()
    #expect(abs((report.durationSeconds ?? 0) - 43 * 1_024 / 44_100.0) < 1e-9)
    #expect(isTruncated(inspect(Array(bytes.dropLast(3)), as: .adts)))
  }

  /// ADTS rejects noise after the sync.
  @Test func adtsRejectsNoiseAfterTheSync() {
    #expect(MediaProbe.identify(bytes: [0xFF, 0xF1] + ProbeFixtures.fill(300, 0xA5)) == nil)
    #expect(MediaProbe.identify(bytes: ProbeFixtures.adtsFrame() + ProbeFixtures.fill(50, 0x01)) == nil)
    // Frame length below the header size.
    #expect(
      MediaProbe.identify(bytes: [0xFF, 0xF1, 0x50, 0x40, 0x00, 0x1F, 0xFC] + ProbeFixtures.fill(20)) == nil)
  }

  /// WAV gives format and duration.
  @Test func wavGivesFormatAndDuration() throws {
    let bytes = ProbeFixtures.wav(samples: 16_000)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .wav && identified.sampleRate == 8_000 && identified.channels == 1)
    #expect(identified.durationSeconds == 2)
    let report = try inspect(bytes, as: .wav).get()
    #expect(report.durationSeconds == 2 && report.codecs == ["pcm"])
  }

  /// A WAV data chunk longer than the file is truncated, unless its size is a streaming
  /// placeholder.
  @Test func wavDataLongerThanTheFileIsTruncatedUnlessAPlaceholder() throws {
    #expect(isTruncated(inspect(ProbeFixtures.wav(samples: 100, declared: 100_000), as: .wav)))
    #expect(isTruncated(inspect(Array(ProbeFixtures.wav(samples: 100).dropLast(1)), as: .wav)))
    let streaming = try inspect(ProbeFixtures.wav(samples: 100, declared: 0xFFFF_FFFF), as: .wav).get()
    #expect(streaming.durationSeconds == 200.0 / 16_000)
    #expect(!streaming.notes.isEmpty)
  }

  /// WAV with bad format is refused.
  @Test func wavWithBadFormatIsRefused() {
    var bytes = ProbeFixtures.wav(samples: 10, extraChunk: false)
    bytes.replaceSubrange(22..<24, with: [0, 0])  // channels 0
    #expect(MediaProbe.identify(bytes: bytes) == nil)
    #expect(
      MediaProbe.identify(
        bytes: ProbeFixtures.ascii("RIFF") + ProbeFixtures.le32(4) + ProbeFixtures.ascii("WEBPVP8 ")) == nil)
  }

  /// CAF gives format and duration.
  @Test func cafGivesFormatAndDuration() throws {
    let bytes = ProbeFixtures.caf(frames: 4_000)
    let identified = try #require(MediaProbe.identify(bytes: bytes))
    #expect(identified.format == .caf && identified.sampleRate == 8_000 && identified.codecs == ["lpcm"])
    let report = try inspect(bytes, as: .caf).get()
    #expect(report.durationSeconds == 0.5)
  }

  /// A CAF data chunk of size -1 runs to the end of the file.
  @Test func cafDataSizeMinusOneRunsToTheEnd() throws {
    let report = try inspect(ProbeFixtures.caf(frames: 800, dataSize: -1), as: .caf).get()
    #expect(report.durationSeconds == 0.1)
  }

  /// CAF chunk past the end is truncated and bad headers are refused.
  @Test func cafChunkPastTheEndIsTruncatedAndBadHeadersAreRefused() {
    #expect(isTruncated(inspect(Array(ProbeFixtures.caf().dropLast(1)), as: .caf)))
    var version2 = ProbeFixtures.caf()
    version2[5] = 2
    #expect(MediaProbe.identify(bytes: version2) == nil)
    var negative = ProbeFixtures.caf(dataSize: -2)
    #expect(MediaProbe.identify(bytes: negative)?.format == .caf)
    guard case .failure(.malformed) = inspect(negative, as: .caf) else {
      Issue.record("expected malformed")
      return
    }
    negative[9] = 0x00  // 'd' of desc → not desc
    #expect(MediaProbe.identify(bytes: negative) == nil)
  }
}
