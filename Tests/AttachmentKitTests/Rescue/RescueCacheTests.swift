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
}
