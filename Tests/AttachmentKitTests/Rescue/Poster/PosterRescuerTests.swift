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
    #expect(elapsed < 4 + deadlineMarginSeconds, "within the deadline: \(elapsed) s")
    let luma = try await Self.meanLuma(output, in: scratch.path)
    #expect(
      luma >= PosterConfiguration().darkLuma, "the poster is not the black first frame (mean luma \(luma))")
  }

  @Test(
    "a transcode admitted but not done when the poster's reserve begins is stopped there; the poster follows")
  func posterAfterAStoppedTranscode() async throws {
    let scratch = try ScratchDirectory("poster-stopped")
    defer { scratch.remove() }
    let source = try await Self.fadeIn(seconds: 15, in: scratch.path)
    let output = scratch.path + "/poster.jpg"
    var media = MediaRescueConfiguration()
    media.transcodeCost.encodeSecondsPerMegapixelSecond = 0.0001  // the estimate says it fits
    media.transcodeCost.decodeSecondsPerMegapixelSecond = 0.0001
    // The transcode is made unable to be done in time, however fast this machine: its worker
    // is stopped (SIGSTOP) once its output has bytes (admitted, its writer begun: the muxer's
    // first 32 KiB, over a second here under load, hence the 6 s before the reserve). Only the
    // first worker is stopped; the poster's runs.
    async let stopped = StoppedWorkers.stopWorking(
      below: getpid(), library: "ffmpeg", outputUnder: scratch.path, atLeast: 1)
    let (result, elapsed) = await Self.rescue(
      source, into: output, rescuers: StandardRescuers.make(media: media), seconds: 9)
    let worker = try #require(await stopped, "no worker was seen transcoding")
    defer { kill(worker, SIGCONT) }
    let validation = try result.get()
    #expect(validation.rescued?.actions == [.poster])
    #expect(validation.type == .jpeg)
    // 9 s less the poster's 3: the stopped transcode is killed at 6 s, not before, not later.
    #expect(elapsed >= 5.9, "the transcode ran until the reserve began: \(elapsed) s")
    #expect(elapsed < 9 + deadlineMarginSeconds, "within the deadline: \(elapsed) s")
    #expect(await StoppedWorkers.isGone(worker), "the stopped transcode's worker was not killed")
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

  @Test(
    "a video turned by its display matrix gets an upright poster, as the ffmpeg command's autorotate shows its first frame",
    arguments: [90, 180, 270])
  func posterUpright(rotate: Int) async throws {
    let scratch = try ScratchDirectory("poster-rotated")
    defer { scratch.remove() }
    let plain = scratch.path + "/plain.mp4"
    try await MediaOpenGOPTests.ffmpeg([
      "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "2", "-c:v", "libvpx-vp9", "-deadline",
      "realtime", "-cpu-used", "8", plain,
    ])
    let source = scratch.path + "/rotated.mp4"
    try await MediaOpenGOPTests.ffmpeg([
      "-i", plain, "-c", "copy", "-metadata:s:v", "rotate=\(rotate)", source,
    ])
    let theirs = scratch.path + "/theirs.jpg"
    try await MediaOpenGOPTests.ffmpeg(["-i", source, "-frames:v", "1", "-q:v", "3", theirs])
    let output = scratch.path + "/poster.jpg"
    var poster = PosterConfiguration()
    poster.darkLuma = 0  // the first frame, as ffmpeg's
    let (result, _) = await Self.rescue(
      source, into: output, rescuers: [PosterRescuer(configuration: poster)], seconds: 10)
    let validation = try result.get()
    let portrait = rotate != 180
    #expect(validation.width == (portrait ? 240 : 320) && validation.height == (portrait ? 320 : 240))
    let psnr = try await Self.psnr(output, theirs, in: scratch.path)
    #expect(psnr > 30, "the poster matches ffmpeg's upright first frame: \(psnr) dB")
  }

  /// The mean PSNR (dB) of two images of one size, by the ffmpeg command's `psnr` filter.
  static func psnr(_ first: String, _ second: String, in directory: String) async throws -> Double {
    let log = directory + "/psnr.log"
    try await MediaOpenGOPTests.ffmpeg([
      "-i", first, "-i", second, "-lavfi", "psnr=stats_file=\(log)", "-f", "null", "-",
    ])
    let text = try String(contentsOfFile: log, encoding: .utf8)
    let field = text.split(separator: " ").first { $0.hasPrefix("psnr_avg:") }
    let value = field.flatMap { Double($0.dropFirst("psnr_avg:".count)) }
    return value ?? (text.contains("psnr_avg:inf") ? .infinity : 0)
  }

  @Test("display-matrix angles become quarter turns clockwise; others are left as they are")
  func quarterTurns() {
    #expect(PosterOrientation(counterclockwiseDegrees: 0).quarterTurns == 0)
    #expect(PosterOrientation(counterclockwiseDegrees: -90).quarterTurns == 1)
    #expect(PosterOrientation(counterclockwiseDegrees: 180).quarterTurns == 2)
    #expect(PosterOrientation(counterclockwiseDegrees: -180).quarterTurns == 2)
    #expect(PosterOrientation(counterclockwiseDegrees: 90).quarterTurns == 3)
    #expect(PosterOrientation(counterclockwiseDegrees: 90.4).quarterTurns == 3)
    #expect(PosterOrientation(counterclockwiseDegrees: 45).quarterTurns == 0)
    #expect(PosterOrientation(counterclockwiseDegrees: .nan).quarterTurns == 0)
  }

  @Test(
    "the poster's own budget running out before the job's deadline keeps the refusal, not deadline_exceeded")
  func ownBudgetIsNotTheDeadline() async throws {
    let scratch = try ScratchDirectory("poster-budget")
    defer { scratch.remove() }
    var poster = PosterConfiguration()
    poster.maximumSeconds = 0  // spent before it starts
    let output = scratch.path + "/still.jpg"
    let (result, elapsed) = await Self.rescue(
      Samples.path("webm-vp9.webm"), into: output, rescuers: [PosterRescuer(configuration: poster)],
      seconds: 10)
    guard case .failure(let error) = result else {
      Issue.record("a poster was made in no time: \(result)")
      return
    }
    #expect(error.code == .unsupportedType, "\(error)")
    #expect(error.message.contains("no poster either: no clean frame within the poster's 0.0 s"), "\(error)")
    #expect(elapsed < 5, "\(elapsed) s")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test(
    "audio has no poster, so its rescue keeps the whole deadline: a FLAC is transcoded though the poster's share is longer"
  )
  func audioKeepsItsDeadline() async throws {
    let scratch = try ScratchDirectory("poster-audio")
    defer { scratch.remove() }
    let output = scratch.path + "/out.m4a"
    // A poster share (60 s) longer than the deadline (30 s): taken from audio's time, it would
    // leave none; audio keeps all 30 s (2 s once, which a loaded parallel run overran).
    var poster = PosterConfiguration()
    poster.maximumSeconds = 60
    let (result, _) = await Self.rescue(
      Samples.path("flac-audio.flac"), into: output, rescuers: StandardRescuers.make(poster: poster),
      seconds: 30)
    let validation = try result.get()
    #expect(validation.type == .m4a)
    #expect(validation.rescued?.actions == [.transcoded])
  }
}
