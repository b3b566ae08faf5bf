import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The media rescue on long and hostile sources: a cut within the limit by stream copy, the
/// deadline honoured mid-transcode, declared budgets refused before decoding, and files that
/// only pretend to be media keeping their refusal.
@Suite("Media rescue: long and hostile sources", .rescueTurn, .threadOfItsOwn)
struct MediaRescueBoundsTests {
  private static func job(
    _ path: String, refusal: Refusal, output: String,
    deadline: ContinuousClock.Instant = .now + .seconds(20)
  ) -> RescueJob {
    RescueJob(
      source: path, bytes: MediaRescuerTests.size(path), refusal: refusal, output: output,
      limits: ValidationLimits(), deadline: deadline)
  }

  @Test("a 45 s H.264 MP4 with a keyframe every 2 s is cut by stream copy at 30 s, not past it")
  func trimsByCopy() async throws {
    let scratch = try ScratchDirectory("media-trim")
    defer { scratch.remove() }
    let source = try await LargeSamples.path("h264-aac-45s-gop2.mp4")
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    #expect(refusal.reason == .tooLong && refusal.facts.durationSeconds ?? 0 > 44)
    let output = scratch.path + "/out.mp4"

    let rescue = try MediaRescuer().rescue(Self.job(source, refusal: refusal, output: output))

    let delivered = try Validator().validate(file: output)
    #expect(rescue.actions == [.trimmed])
    let seconds = try #require(delivered.durationSeconds)
    #expect(seconds <= 30 && seconds >= 29.9, "\(seconds) s")
    #expect(delivered.codecs.contains { $0.hasPrefix("avc1") } && delivered.codecs.contains("mp4a.40.2"))
    #expect(rescue.originalDurationSeconds.map { $0 > 44.9 } == true)
    #expect(rescue.originalCodecs == ["h264", "aac"])
  }

  @Test("a 40 s clip with a single keyframe cannot be cut by copy: its video is re-encoded to 30 s")
  func trimsByTranscodeWithoutKeyframes() async throws {
    let scratch = try ScratchDirectory("media-trim-one-gop")
    defer { scratch.remove() }
    let source = try await LargeSamples.path("h264-40s-one-gop.mp4")
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    let output = scratch.path + "/out.mp4"
    let rescue = try MediaRescuer().rescue(Self.job(source, refusal: refusal, output: output))
    let seconds = try #require(try Validator().validate(file: output).durationSeconds)
    #expect(seconds <= 30 && seconds >= 29, "\(seconds) s")
    #expect(rescue.actions == [.trimmed, .transcoded])
  }

  @Test("a deadline that passes mid-transcode is answered at the deadline with deadline_exceeded")
  func deadlineMidTranscode() async throws {
    let scratch = try ScratchDirectory("media-deadline")
    defer { scratch.remove() }
    let source = try await LargeSamples.path("mpeg4-720p-45s.avi")
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    let output = scratch.path + "/out.mp4"
    // 30 s of 720p takes seconds to encode on this machine's cores; the deadline is at 1 s.
    let deadline = ContinuousClock.now + .seconds(1)

    let error = #expect(throws: AttachmentError.self) {
      try MediaRescuer().rescue(Self.job(source, refusal: refusal, output: output, deadline: deadline))
    }

    #expect(error?.code == .deadlineExceeded, "\(String(describing: error))")
    let late = deadline.duration(to: .now)
    // Within the margin: the wrong answer (the transcode run to its end) comes 7 s or more later.
    #expect(late < deadlineMargin, "answered \(late) after the deadline")
    // The output was started (the transcode was under way), and is the caller's to remove.
    #expect(FileManager.default.fileExists(atPath: output))
  }

  @Test("declared budgets are refused before anything is decoded: frame size and frame count")
  func budgets() throws {
    let scratch = try ScratchDirectory("media-budgets")
    defer { scratch.remove() }
    let source = Samples.path("webm-vp9.webm")  // 160×120, 15 frames
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    var pixels = MediaRescueConfiguration()
    pixels.maximumSourceFramePixels = 160 * 119
    let tooWide = #expect(throws: AttachmentError.self) {
      try MediaRescuer(configuration: pixels).rescue(
        Self.job(source, refusal: refusal, output: scratch.path + "/a"))
    }
    #expect(tooWide?.code == .tooManyPixels)
    var frames = MediaRescueConfiguration()
    frames.maximumSourceFrames = 10
    let tooMany = #expect(throws: AttachmentError.self) {
      try MediaRescuer(configuration: frames).rescue(
        Self.job(source, refusal: refusal, output: scratch.path + "/b"))
    }
    #expect(tooMany?.code == .tooManyPixels)
    #expect(tooMany?.message.contains("frames") == true)
    var seconds = MediaRescueConfiguration()
    seconds.maximumSourceSeconds = 0.5
    let tooLong = #expect(throws: AttachmentError.self) {
      try MediaRescuer(configuration: seconds).rescue(
        Self.job(source, refusal: refusal, output: scratch.path + "/c"))
    }
    #expect(tooLong?.code == .tooLong)
  }

  @Test("a text file named .webm and a truncated WebM keep their refusals; no output is left")
  func pretenders() throws {
    let scratch = try ScratchDirectory("media-pretenders")
    defer { scratch.remove() }
    let rescuers: [any Rescuer] = [ImageRescuer(), MediaRescuer()]
    let text = scratch.path + "/clip.webm"
    try writeTestFile(Data("<html>not a video</html>\n".utf8), to: text)
    let output = scratch.path + "/out"
    let refusedText = #expect(throws: AttachmentError.self) {
      try rescuers.attachment(fromFile: text, rescuingInto: output, limits: ValidationLimits())
    }
    #expect(refusedText?.code == .unsupportedType)
    #expect(refusedText?.message.contains("Not rescued") == false)  // no rescuer tried

    let whole = try Samples.bytes("webm-vp9.webm")
    let truncated = scratch.path + "/cut.webm"
    try writeTestFile(Data(whole.prefix(whole.count / 2)), to: truncated)
    let refusedCut = #expect(throws: AttachmentError.self) {
      try rescuers.attachment(fromFile: truncated, rescuingInto: output, limits: ValidationLimits())
    }
    #expect(refusedCut?.code == .unsupportedType)
    #expect(refusedCut?.message.contains("Not rescued") == true, "\(String(describing: refusedCut))")
    #expect(!FileManager.default.fileExists(atPath: output))
  }
}
