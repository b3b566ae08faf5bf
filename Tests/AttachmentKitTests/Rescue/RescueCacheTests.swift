import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Callers with rescue on and off sharing one cache directory: each gets what its own policy
/// asks, and a rescue-off caller is never served a rescued derivative as the original.
@Suite("Rescue: shared cache policy", .rescueTurn, .threadOfItsOwn)
struct RescueCacheTests {
  /// A server and a cache directory shared by several pipelines.
  struct Fixture {
    let server: TestHTTPServer
    let scratch: ScratchDirectory

    init() throws {
      server = try TestHTTPServer.start()
      scratch = try ScratchDirectory("rescue-cache")
    }

    /// A pipeline over the shared cache; rescue off unless configured.
    func pipeline(_ configure: (inout PipelineConfiguration) -> Void = { _ in }) throws -> AttachmentPipeline
    {
      var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
      configuration.downloader.allowPrivateNetworks = true  // the test server is on loopback
      configure(&configuration)
      return try AttachmentPipeline(configuration: configuration)
    }

    func close() {
      server.stop()
      scratch.remove()
    }
  }

  @Test(
    "a converted WebP: rescue-on callers hit it, a rescue-off caller gets unsupported_type with no request")
  func convertedEntry() async throws {
    // Given a WebP served once and two callers on one cache, rescue on and off
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/p", body: try Samples.bytes("webp-lossy.webp"), contentType: "image/webp")
    let url = fixture.server.url("/p")
    let rescuing = try fixture.pipeline { $0.rescue = RescueConfiguration() }
    let plain = try fixture.pipeline()

    // When the rescuing caller fetches it, then the plain one, then the rescuing one again
    let first = try await rescuing.attachment(for: url, timeout: generousTimeout)
    let refusal = await #expect(throws: AttachmentError.self) {
      try await plain.attachment(for: url, timeout: generousTimeout)
    }
    let hit = try await rescuing.attachment(for: url, timeout: generousTimeout)

    // Then the plain caller got the original's refusal from the record, without a request,
    #expect(refusal?.code == .unsupportedType)
    #expect(refusal?.detected == "image/webp")
    #expect(plain.cachedAttachment(for: url) == nil)
    #expect(fixture.server.requestCount(path: "/p") == 1)
    // and the rescuing caller's hit carries the rescue facts through the record
    #expect(first.source == .network)
    #expect(hit.source == .cache)
    #expect(hit.path == first.path)
    #expect(hit.validation.rescued == first.validation.rescued)
    #expect(hit.validation.rescued?.actions == [.converted])
  }

  @Test("a downscaled JPEG: each caller gets what its own limits and rescue setting ask")
  func downscaledEntry() async throws {
    // Given the 24 MP JPEG, a rescuing caller, a plain caller with default limits, and a plain
    // caller whose pixel ceiling accepts the original
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serveFile(
      "/big", file: try await LargeSamples.path("jpeg-24mp.jpg"), contentType: "image/jpeg")
    let url = fixture.server.url("/big")
    let rescuing = try fixture.pipeline { $0.rescue = RescueConfiguration() }
    let plain = try fixture.pipeline()
    let roomy = try fixture.pipeline { $0.limits.maximumDecodedImageBytes = 128 * 1024 * 1024 }

    // When the rescuing caller fetches it, then the plain one
    let rescued = try await rescuing.attachment(for: url, timeout: .seconds(20))
    let refusal = await #expect(throws: AttachmentError.self) {
      try await plain.attachment(for: url, timeout: generousTimeout)
    }
    // Then the plain caller is refused as the original would be, from the record alone
    #expect(rescued.validation.rescued?.actions == [.downscaled])
    #expect(refusal?.code == .tooManyPixels)
    #expect(refusal?.message.contains("6000×4000") == true)
    #expect(fixture.server.requestCount(path: "/big") == 1)

    // When the roomy caller asks: the derivative is not the original it accepts, so it fetches
    let original = try await roomy.attachment(for: url, timeout: .seconds(20))
    #expect(original.source == .network)
    #expect(original.validation.rescued == nil)
    #expect(original.validation.width == 6000)
    #expect(fixture.server.requestCount(path: "/big") == 2)

    // When the rescuing caller asks again: the original now cached is over its limits, so it
    // rescues again rather than being refused
    let again = try await rescuing.attachment(for: url, timeout: .seconds(20))
    #expect(again.source == .network)
    #expect(again.validation.rescued?.actions == [.downscaled])
    #expect(fixture.server.requestCount(path: "/big") == 3)
  }

  @Test("a rescuing caller with a smaller source limit refuses a derivative of a larger source")
  func sourceLimitOnHit() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serveFile(
      "/big", file: try await LargeSamples.path("jpeg-24mp.jpg"), contentType: "image/jpeg")
    let url = fixture.server.url("/big")
    let rescuing = try fixture.pipeline { $0.rescue = RescueConfiguration() }
    let strict = try fixture.pipeline {
      $0.rescue = RescueConfiguration()
      $0.rescue?.maximumSourceBytes = 1_000_000
    }

    _ = try await rescuing.attachment(for: url, timeout: .seconds(20))
    let refusal = await #expect(throws: AttachmentError.self) {
      try await strict.attachment(for: url, timeout: generousTimeout)
    }

    #expect(refusal?.code == .tooLarge)
    #expect(refusal?.message.contains("source limit of 1000000") == true)
    #expect(fixture.server.requestCount(path: "/big") == 1)
  }

  /// One kind of cached derivative: the sample served, how the rescuing caller is configured,
  /// the action the rescue takes, and the code a caller without rescuers gets for the original.
  struct DerivativeCase: Sendable, CustomTestStringConvertible {
    /// What the derivative is, for the test's name.
    let label: String
    /// The sample file (``Samples/path(_:)``) the server sends.
    let sample: String
    /// The action the rescue must report, first.
    let action: Rescue.Action
    /// The code a fresh download without rescuers gets.
    let code: AttachmentError.Code
    /// Whether the transcode is made too costly to fit, so the poster rescuer answers.
    var poster = false

    var testDescription: String { label }
  }

  static let derivatives: [DerivativeCase] = [
    DerivativeCase(
      label: "converted image", sample: "webp-lossy.webp", action: .converted, code: .unsupportedType),
    DerivativeCase(
      label: "transcoded video (codec)", sample: "mp4-vp9-aac.mp4", action: .transcoded,
      code: .unsupportedCodec),
    DerivativeCase(
      label: "trimmed video", sample: "too-long-video-40s.mp4", action: .trimmed, code: .tooLong),
    DerivativeCase(
      label: "re-wrapped container", sample: "mpegts-h264-aac.ts", action: .rewrapped, code: .unsupportedType),
    DerivativeCase(
      label: "audio transcode", sample: "m4a-dts.mp4", action: .transcoded, code: .unsupportedCodec),
    DerivativeCase(
      label: "poster", sample: "mp4-vp9-aac.mp4", action: .poster, code: .unsupportedCodec, poster: true),
  ]

  @Test(
    "a caller without rescuers hitting any cached derivative gets the code a fresh download of the original gives (issue 52, item 6)",
    arguments: derivatives)
  func derivativeHitAnswersAsAFreshDownload(_ derivative: DerivativeCase) async throws {
    // Given a derivative cached by a caller with the standard rescuers
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serveFile(
      "/d", file: Samples.path(derivative.sample), contentType: "application/octet-stream")
    let url = fixture.server.url("/d")
    var media = MediaRescueConfiguration()
    if derivative.poster {  // no transcode fits: the poster answers at once
      media.transcodeAdmission = .whenEstimateFits(reserve: .zero)
      media.transcodeCost.encodeSecondsPerMegapixelSecond = 1_000_000
      media.transcodeCost.decodeSecondsPerMegapixelSecond = 1_000_000
    }
    let rescuing = try fixture.pipeline { $0.rescuers = StandardRescuers.make(media: media) }
    let delivered = try await rescuing.attachment(for: url, timeout: .seconds(20))
    let rescued = try #require(delivered.validation.rescued)
    #expect(rescued.actions.first == derivative.action, "\(rescued)")

    // When a caller without rescuers on the same cache asks, and one on a fresh cache
    let plain = try fixture.pipeline()
    let hitError = await #expect(throws: AttachmentError.self) {
      try await plain.attachment(for: url, timeout: generousTimeout)
    }
    #expect(fixture.server.requestCount(path: "/d") == 1, "the hit was judged from the record")
    var freshConfiguration = PipelineConfiguration(cacheDirectory: fixture.scratch.path + "/fresh")
    freshConfiguration.downloader.allowPrivateNetworks = true
    let freshError = await #expect(throws: AttachmentError.self) {
      try await AttachmentPipeline(configuration: freshConfiguration).attachment(
        for: url, timeout: generousTimeout)
    }

    // Then both get the same code, the one the original calls for
    #expect(freshError?.code == derivative.code, "\(String(describing: freshError))")
    #expect(hitError?.code == derivative.code, "\(String(describing: hitError))")
  }

  @Test(
    "a record from before the typed verdict (no rescued-type, rescued-reason) still reads, and answers unsupported_codec"
  )
  func legacyRecordOfACodecRescue() async throws {
    // Given a VP9 MP4 rescued and cached, whose record then loses its typed verdict lines
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serveFile("/v", file: Samples.path("mp4-vp9-aac.mp4"), contentType: "video/mp4")
    let url = fixture.server.url("/v")
    let rescuing = try fixture.pipeline { $0.rescuers = [MediaRescuer()] }
    let delivered = try await rescuing.attachment(for: url, timeout: .seconds(20))
    let rescued = try #require(delivered.validation.rescued)
    #expect(rescued.originalType == .mp4 && rescued.originalReason == .unsupportedCodec)
    #expect(rescued.from.hasPrefix("video/mp4; codecs="), "\(rescued.from)")
    let text = try #require(rescuing.cache.recordText(forURL: url))
    #expect(text.contains("rescued-type mp4\n") && text.contains("rescued-reason unsupportedCodec\n"))
    let legacy = text.split(separator: "\n", omittingEmptySubsequences: false)
      .filter { !$0.hasPrefix("rescued-type ") && !$0.hasPrefix("rescued-reason ") }
      .joined(separator: "\n")
    try rescuing.cache.replaceRecordText(legacy, forURL: url)

    // When the rescuing caller and a caller without rescuers ask
    let hit = try await rescuing.attachment(for: url, timeout: generousTimeout)
    let refusal = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline().attachment(for: url, timeout: generousTimeout)
    }

    // Then the old record is still a hit, its verdict read from rescued-from, and the caller
    // without rescuers gets unsupported_codec, with no request
    #expect(hit.source == .cache)
    #expect(hit.validation.rescued == rescued)
    #expect(refusal?.code == .unsupportedCodec, "\(String(describing: refusal))")
    #expect(fixture.server.requestCount(path: "/v") == 1)
  }

  @Test("a Rescue encoded as JSON before the typed verdict decodes with it read from its from")
  func legacyJSON() throws {
    let json =
      #"{"rescuer":"media","from":"video\/mp4; codecs=\"vp09\"","actions":["transcoded"],"originalBytes":10}"#
    let rescue = try JSONDecoder().decode(Rescue.self, from: Data(json.utf8))
    #expect(rescue.originalType == .mp4 && rescue.originalReason == .unsupportedCodec)
    let webp = #"{"from":"image\/webp","actions":["converted"],"originalBytes":10}"#
    let converted = try JSONDecoder().decode(Rescue.self, from: Data(webp.utf8))
    #expect(converted.originalType == nil && converted.originalReason == nil)
    let again = try JSONDecoder().decode(Rescue.self, from: JSONEncoder().encode(rescue))
    #expect(again == rescue)
  }
}
