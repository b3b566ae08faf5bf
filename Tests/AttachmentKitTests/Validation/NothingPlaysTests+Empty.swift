import Testing

@testable import AttachmentKit

/// Issue 27, item 4: audio files whose structure is sound but hold no playable samples are
/// refused with `empty`, told apart from short ones.
extension NothingPlaysTests {
  @Test("an MP3 whose only frame is its Xing / LAME info frame holds no audio: empty, not short")
  func mp3WithOnlyItsInfoFrame() throws {
    // ffmpeg 5.1 decodes 0 samples from the real one ("Failed to read frame size").
    let real = Array(try Samples.bytes("mp3-xing-vbr.mp3").prefix(182))
    for (name, bytes) in [
      ("info-only.mp3", real), ("info-fixture.mp3", ProbeFixtures.mp3(frames: 1, xing: true)),
    ] {
      #expect(MediaProbe.identify(bytes: bytes)?.format == .mp3, "\(name)")
      let error = try #require(try Self.refusal(bytes, as: name))
      // Before issue 27 both were accepted with a duration of 0.0 s.
      #expect(error.code == .empty && error.isRejection, "\(error)")
      #expect(error.message.contains("info frame"), "\(error.message)")
    }
    // One audio frame after the info frame is a short file, not an empty one.
    let short = try DurationTests.validate(ProbeFixtures.mp3(frames: 2, xing: true), as: "one-frame.mp3")
      .get()
    #expect((short.durationSeconds ?? 0) > 0)
  }

  @Test("a WAV whose data chunk is 0 bytes holds no audio: empty; one sample is accepted")
  func wavWithEmptyData() throws {
    // ffmpeg 5.1: "Output file is empty, nothing was encoded".
    let error = try #require(try Self.refusal(ProbeFixtures.wav(samples: 0), as: "empty-data.wav"))
    #expect(error.code == .empty && error.isRejection, "\(error)")
    #expect(error.message.contains("data chunk is 0 bytes"), "\(error.message)")
    _ = try DurationTests.validate(ProbeFixtures.wav(samples: 1), as: "one-sample.wav").get()
  }
}
