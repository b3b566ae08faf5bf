import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A video that cannot be made playable in the time left falls back to a JPEG poster of its
/// first frame that is not nearly black (issue #42, item 6).
@Suite("Poster: a still when no playable video fits the time left", .rescueTurn, .threadOfItsOwn)
struct PosterRescuerTests {
  /// A 720p VP9 + Opus WebM of `seconds` that fades in from black over its first 1.5 s.
  static func fadeIn(seconds: Int, in directory: String) async throws -> String {
    let path = directory + "/fade-in.webm"
    try await MediaOpenGOPTests.ffmpeg([
      "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30,fade=in:st=0:d=1.5", "-f", "lavfi", "-i",
      "sine=frequency=440:sample_rate=48000", "-t", String(seconds), "-c:v", "libvpx-vp9", "-deadline",
      "realtime", "-cpu-used", "8", "-b:v", "1500k", "-c:a", "libopus", "-b:a", "96k", path,
    ])
    return path
  }

  /// The mean luma (0–255) of an image, decoded by the `ffmpeg` command to 8-bit gray.
  static func meanLuma(_ path: String, in directory: String) async throws -> Int {
    let gray = directory + "/gray.raw"
    try await MediaOpenGOPTests.ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "gray", gray])
    let bytes = try Data(contentsOf: URL(fileURLWithPath: gray))
    try #require(!bytes.isEmpty)
    return bytes.reduce(0) { $0 + Int($1) } / bytes.count
  }

  static func rescue(
    _ source: String, into output: String, rescuers: [any Rescuer], seconds: Double
  ) async -> (Result<Validation, AttachmentError>, elapsed: Double) {
    await onOwnThread {
      let start = ContinuousClock.now
      let result = Result { () throws(AttachmentError) -> Validation in
        try rescuers.attachment(
          fromFile: source, rescuingInto: output, limits: ValidationLimits(),
          deadline: start + .milliseconds(Int64(seconds * 1000)))
      }
      return (result, (ContinuousClock.now - start).inSeconds)
    }
  }

  @Test(
    "a transcode whose estimate does not fit gives a poster at once: JPEG, the video's size, not the black first frame"
  )
  func posterWhenTheEstimateDoesNotFit() async throws {
    let scratch = try ScratchDirectory("poster-estimate")
    defer { scratch.remove() }
    let source = try await Self.fadeIn(seconds: 10, in: scratch.path)
    let output = scratch.path + "/poster.jpg"
    // 4 s, less the poster's 3: a 10 s 720p transcode (about 2.5 s) does not fit the 1 s left.
    let (result, elapsed) = await Self.rescue(
      source, into: output, rescuers: StandardRescuers.make(), seconds: 4)
    let validation = try result.get()
    #expect(validation.type == .jpeg)
    #expect(validation.width == 1280 && validation.height == 720)
    let rescued = try #require(validation.rescued)
    #expect(rescued.rescuer == "poster" && rescued.actions == [.poster] && rescued.from == "video/webm")
    #expect(rescued.originalCodecs == ["vp9", "opus"])
    #expect(elapsed < 4, "within the deadline: \(elapsed) s")
    let luma = try await Self.meanLuma(output, in: scratch.path)
    #expect(
      luma >= PosterConfiguration().darkLuma, "the poster is not the black first frame (mean luma \(luma))")
  }

  @Test(
    "a transcode admitted but not done when the poster's reserve begins is stopped there; the poster follows")
  func posterAfterAStoppedTranscode() async throws {
    let scratch = try ScratchDirectory("poster-stopped")
    defer { scratch.remove() }
    let source = try await Self.fadeIn(seconds: 15, in: scratch.path)  // about 3.5 s to transcode
    let output = scratch.path + "/poster.jpg"
    var media = MediaRescueConfiguration()
    media.transcodeCost.encodeSecondsPerMegapixelSecond = 0.0001  // the estimate says it fits
    media.transcodeCost.decodeSecondsPerMegapixelSecond = 0.0001
    let (result, elapsed) = await Self.rescue(
      source, into: output, rescuers: StandardRescuers.make(media: media), seconds: 5)
    let validation = try result.get()
    #expect(validation.rescued?.actions == [.poster])
    #expect(validation.type == .jpeg)
    #expect(elapsed >= 1.9, "the transcode ran until the reserve began: \(elapsed) s")
    #expect(elapsed < 5, "within the deadline: \(elapsed) s")
  }

  @Test("without the poster the same file keeps its refusal, at once, and no output is left")
  func posterOff() async throws {
    let scratch = try ScratchDirectory("poster-off")
    defer { scratch.remove() }
    let source = try await Self.fadeIn(seconds: 10, in: scratch.path)
    let output = scratch.path + "/out"
    var media = MediaRescueConfiguration()
    media.transcodeAdmission = .whenEstimateFits(reserve: .zero)
    let (result, _) = await Self.rescue(
      source, into: output, rescuers: StandardRescuers.make(media: media, poster: nil), seconds: 1.5)
    guard case .failure(let error) = result else {
      Issue.record("delivered without a poster rescuer: \(result)")
      return
    }
    #expect(error.code == .unsupportedType, "\(error)")
    #expect(error.message.contains("Not rescued: a transcode"), "\(error)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("the poster is a candidate for video refusals only")
  func videoOnly() throws {
    let poster = PosterRescuer()
    let video = Refusal(
      AttachmentError(.unsupportedCodec, "vp9", detected: "video/webm"), format: "video/webm",
      category: .video,
      facts: MediaFacts(bytes: 1))
    let audio = Refusal(
      AttachmentError(.unsupportedCodec, "opus", detected: "audio/ogg"), format: "audio/ogg",
      category: .audio,
      facts: MediaFacts(bytes: 1))
    let image = Refusal(
      AttachmentError(.tooLarge, "big", detected: "image/png"), format: "image/png", category: .image,
      facts: MediaFacts(bytes: 1))
    #expect(poster.canRescue(video))
    #expect(!poster.canRescue(audio))
    #expect(!poster.canRescue(image))
    #expect(StandardRescuers.make().map(\.name) == ["image", "media", "poster"])
    #expect(StandardRescuers.make(poster: nil).map(\.name) == ["image", "media"])
  }
}
