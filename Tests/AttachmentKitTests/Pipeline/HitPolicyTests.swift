import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A cache hit obeys its caller's policy: callers with different limits share one cache
/// directory, and a hit the caller's policy refuses gets the download's refusal without a
/// request.
@Suite("Cache hits judged by the caller's policy", .threadOfItsOwn)
struct HitPolicyTests {
  /// A pipeline over an existing cache directory with its own policy.
  static func pipeline(
    _ directory: String, _ configure: (inout PipelineConfiguration) -> Void
  ) throws -> AttachmentPipeline {
    var configuration = PipelineConfiguration(cacheDirectory: directory)
    configuration.downloader.allowPrivateNetworks = true
    configure(&configuration)
    return try AttachmentPipeline(configuration: configuration)
  }

  /// The error code of a pipeline call (`nil` when it answered).
  static func code(
    _ pipeline: AttachmentPipeline, _ url: String
  ) async -> AttachmentError.Code? {
    do {
      _ = try await pipeline.attachment(for: url, timeout: generousTimeout)
      return nil
    } catch {
      return error.code
    }
  }

  @Test("two pipelines, one directory: the stricter one is refused from the stored facts, with no request")
  func twoPolicies() async throws {
    // Given a lenient pipeline that cached a 40 s video and a 64×48 JPEG
    let fixture = try PipelineTests.Fixture {
      $0.limits.maximumVideoSeconds = 600
    }
    defer { fixture.close() }
    let video = try Samples.bytes("too-long-video-40s.mp4")
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    fixture.server.serve("/v.mp4", body: video, contentType: "video/mp4")
    fixture.server.serve("/i.jpg", body: jpeg, contentType: "image/jpeg")
    let videoURL = fixture.server.url("/v.mp4")
    let imageURL = fixture.server.url("/i.jpg")
    let lenientVideo = try await fixture.pipeline.attachment(for: videoURL, timeout: generousTimeout)
    let image = try await fixture.pipeline.attachment(for: imageURL, timeout: generousTimeout)
    #expect(lenientVideo.source == .network)
    let directory = fixture.pipeline.configuration.cache.directory

    // When callers with the default limits, a small image limit, a small download limit (the
    // category limits untouched, so only the body limit can refuse), a small pixel budget and
    // no private networks ask for the same URLs
    let defaults = try Self.pipeline(directory) { _ in }
    let smallImages = try Self.pipeline(directory) { $0.limits.maximumImageBytes = image.bytes - 1 }
    let smallBodies = try Self.pipeline(directory) { $0.downloader.maximumBodyBytes = image.bytes - 1 }
    let fewPixels = try Self.pipeline(directory) { $0.limits.maximumDecodedImageBytes = 16 }
    let publicOnly = try Self.pipeline(directory) { $0.downloader.allowPrivateNetworks = false }
    let before = fixture.server.totalRequests

    // Then each gets the refusal its own download would have got, and none of them asks
    // the server
    #expect(await Self.code(defaults, videoURL) == .tooLong)
    #expect(defaults.cachedAttachment(for: videoURL) == nil)
    #expect(await Self.code(smallImages, imageURL) == .tooLarge)
    #expect(await Self.code(smallBodies, imageURL) == .tooLarge)
    #expect(smallBodies.cachedAttachment(for: imageURL) == nil)
    #expect(await Self.code(fewPixels, imageURL) == .tooManyPixels)
    #expect(await Self.code(publicOnly, imageURL) == .blockedAddress)
    #expect(publicOnly.cachedAttachment(for: imageURL) == nil)
    #expect(fixture.server.totalRequests == before, "a policy-refused hit made a request")

    // And the lenient caller and one with the default limits still get their hits
    #expect(try await fixture.pipeline.attachment(for: videoURL, timeout: generousTimeout).source == .cache)
    #expect(try await defaults.attachment(for: imageURL, timeout: generousTimeout).source == .cache)
    #expect(fixture.server.totalRequests == before)
  }

  @Test("the record keeps the peer's address class from libcurl's primary IP")
  func peerClassRecorded() async throws {
    let fixture = try PipelineTests.Fixture()
    defer { fixture.close() }
    fixture.server.serve("/p.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/p.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let key = try #require(URLKey(url))
    let entry = try #require(fixture.pipeline.cache.entry(for: key))
    #expect(entry.record.peer == .loopback)
  }

  @Test("facts that do not decide (no stored peer class) make a miss, and the download decides")
  func undecidedIsAMiss() async throws {
    // Given an entry whose record lost its peer line
    let fixture = try PipelineTests.Fixture()
    defer { fixture.close() }
    fixture.server.serve("/u.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/u.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let text = try #require(fixture.pipeline.cache.recordText(forURL: url))
    try fixture.pipeline.cache.replaceRecordText(
      text.replacingOccurrences(of: "peer loopback\n", with: ""), forURL: url)

    // When a caller that refuses private networks asks, the download is tried and refused
    // at connect time; a caller that allows them is served from the cache
    let publicOnly = try Self.pipeline(fixture.pipeline.configuration.cache.directory) {
      $0.downloader.allowPrivateNetworks = false
    }
    #expect(await Self.code(publicOnly, url) == .blockedAddress)
    #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .cache)
  }

  @Test("address classes come from AddressPolicy")
  func addressClasses() {
    let cases: [(String, PeerAddressClass)] = [
      ("127.0.0.1", .loopback), ("::1", .loopback), ("10.1.2.3", .private), ("192.168.0.1", .private),
      ("172.16.5.5", .private), ("fd00::1", .private), ("169.254.169.254", .linkLocal),
      ("fe80::1", .linkLocal),
      ("8.8.8.8", .public), ("2001:4860:4860::8888", .public), ("::ffff:127.0.0.1", .loopback),
      // addresses that embed IPv4 take the embedded address's class
      ("64:ff9b::7f00:1", .loopback), ("2002:a9fe:a9fe::1", .linkLocal), ("64:ff9b::a00:1", .private),
      ("2001:0:808:808::80ff:fffe", .loopback), ("198.18.0.1", .private), ("240.0.0.1", .private),
    ]
    for (text, expected) in cases {
      #expect(PeerAddressClass(numericAddress: text) == expected, "\(text)")
    }
    #expect(PeerAddressClass(numericAddress: "example.com") == nil)
  }
}
