import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A video's proposed poster time (issue #38, item 2): the time of its first frame that is not
/// nearly black within its first seconds, found in a rescue worker on the miss, stored with the
/// entry, carried by every hit without a worker.
@Suite("Poster time: the first frame that is not nearly black", .rescueTurn, .threadOfItsOwn)
struct PosterTimeTests {
  /// An H.264 MP4 of 320×240 at 25 fps: `black` seconds of black, then 3 s of a test pattern.
  static func video(blackSeconds black: Double, in directory: String, name: String) async throws -> String {
    let path = directory + "/\(name).mp4"
    var arguments: [String]
    if black > 0 {
      arguments = [
        "-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=\(black)", "-f", "lavfi", "-i",
        "testsrc=s=320x240:r=25:d=3", "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]", "-map", "[v]",
      ]
    } else {
      arguments = ["-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=3"]
    }
    arguments += [
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart", path,
    ]
    try await MediaOpenGOPTests.ffmpeg(arguments)
    return path
  }

  /// The defaults with a generous budget: a worker's first start on a loaded machine can take
  /// seconds.
  static var generous: PosterTimeConfiguration {
    var configuration = PosterTimeConfiguration()
    configuration.maximumSeconds = 20
    return configuration
  }

  static func fixture(_ label: String, posterTime: PosterTimeConfiguration? = generous) throws
    -> PipelineFixture
  {
    try PipelineFixture(label) { $0.posterTime = posterTime }
  }

  @Test(
    "a black first second is skipped: the proposed time is that of the first coloured frame; a hit carries it"
  )
  func skipsABlackFirstSecond() async throws {
    // Given a real video whose first second is black, served by a real server
    let fixture = try Self.fixture("poster-time-black")
    defer { fixture.close() }
    let source = try await Self.video(blackSeconds: 1, in: fixture.scratch.path, name: "black-first")
    let url = fixture.serve(source, name: "black-first")

    // When it is fetched with poster times on
    let miss = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then it is accepted as it is, and its poster time is past the black second
    #expect(miss.type == .mp4 && miss.validation.rescued == nil)
    let seconds = try #require(miss.validation.posterTimeSeconds, "no poster time proposed")
    #expect(seconds >= 1.0 && seconds < 1.5, "proposed \(seconds) s")
    // and a hit carries it from the record
    let hit = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(hit.source == .cache)
    #expect(hit.validation.posterTimeSeconds == seconds)
    // and a new pipeline over the same cache (the record decoded again) too
    var configuration = PipelineConfiguration(cacheDirectory: fixture.scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    let again = try await AttachmentPipeline(configuration: configuration).attachment(
      for: url, timeout: generousTimeout)
    #expect(again.source == .cache && again.validation.posterTimeSeconds == seconds)
    #expect(fixture.server.requestCount(path: "/m/black-first") == 1)
  }

  @Test("a video whose first frame is bright gets 0; an image gets none")
  func brightFirstFrame() async throws {
    var unbounded = PosterTimeConfiguration()
    unbounded.maximumSeconds = .infinity  // bounded by the deadline alone, never a trap
    let fixture = try Self.fixture("poster-time-bright", posterTime: unbounded)
    defer { fixture.close() }
    let source = try await Self.video(blackSeconds: 0, in: fixture.scratch.path, name: "bright")
    let video = try await fixture.pipeline.attachment(
      for: fixture.serve(source, name: "bright"), timeout: generousTimeout)
    #expect(video.validation.posterTimeSeconds == 0)
    let image = try await fixture.pipeline.attachment(
      for: fixture.serve(Samples.path("jpeg-baseline.jpg"), name: "photo"), timeout: generousTimeout)
    #expect(image.type == .jpeg && image.validation.posterTimeSeconds == nil)
  }

  @Test("off by default; dark beyond the search window or past the budget: no proposal, never an error")
  func noProposal() async throws {
    let off = try Self.fixture("poster-time-off", posterTime: nil)
    defer { off.close() }
    let source = try await Self.video(blackSeconds: 1, in: off.scratch.path, name: "black-first")
    let plain = try await off.pipeline.attachment(
      for: off.serve(source, name: "black-first"), timeout: generousTimeout)
    #expect(plain.type == .mp4 && plain.validation.posterTimeSeconds == nil)

    // A window shorter than the black: nothing bright within it.
    var short = Self.generous
    short.searchSeconds = 0.5
    let windowed = try Self.fixture("poster-time-window", posterTime: short)
    defer { windowed.close() }
    let dark = try await windowed.pipeline.attachment(
      for: windowed.serve(source, name: "black-first"), timeout: generousTimeout)
    #expect(dark.type == .mp4 && dark.validation.posterTimeSeconds == nil)

    // A reserve before the deadline larger than the time left: no search at all.
    var reserved = PosterTimeConfiguration()
    reserved.deadlineReserveSeconds = 60
    let late = try Self.fixture("poster-time-reserve", posterTime: reserved)
    defer { late.close() }
    let kept = try await late.pipeline.attachment(
      for: late.serve(source, name: "black-first"), timeout: generousTimeout)
    #expect(kept.type == .mp4 && kept.validation.posterTimeSeconds == nil)

    // A budget too small for a worker to start: the video is delivered without a proposal.
    var tiny = PosterTimeConfiguration()
    tiny.maximumSeconds = 0.001
    let hurried = try Self.fixture("poster-time-budget", posterTime: tiny)
    defer { hurried.close() }
    let start = ContinuousClock.now
    let quick = try await hurried.pipeline.attachment(
      for: hurried.serve(source, name: "black-first"), timeout: generousTimeout)
    #expect(quick.type == .mp4 && quick.validation.posterTimeSeconds == nil)
    #expect(ContinuousClock.now - start < .seconds(10))
  }
}
