import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The two-tier cache with a second ``AttachmentCache`` as the shared tier (no object store):
/// an instance with an empty local cache answers from the tier without the origin and adopts the
/// entry; a tier's copy that does not match its record is never served.
@Suite("Shared tier: a second cache directory behind the local one")
struct SharedTierTests {
  /// A pipeline over `scratch/name`, with `shared` behind its local cache.
  static func pipeline(_ scratch: ScratchDirectory, _ name: String, shared: any SharedTier) throws
    -> AttachmentPipeline
  {
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/" + name)
    configuration.downloader.allowPrivateNetworks = true
    configuration.sharedTier = shared
    return try AttachmentPipeline(configuration: configuration)
  }

  @Test("a second instance answers from the shared tier without the origin, and keeps the entry locally")
  func secondInstanceFromTheTier() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("shared-tier")
    defer { scratch.remove() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    origin.serve("/a.jpg", body: jpeg, contentType: "image/jpeg")
    let url = origin.url("/a.jpg")
    let shared = try AttachmentCache(configuration: CacheConfiguration(directory: scratch.path + "/shared"))

    // Given one instance that fetched the file (and wrote it to the tier)
    let first = try Self.pipeline(scratch, "one", shared: shared)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(fetched.source == .network)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    let key = try #require(URLKey(url))
    #expect(shared.entry(for: key)?.record.validation.sha256 == fetched.sha256)

    // When another, with an empty cache of its own, asks for it (twice)
    let second = try Self.pipeline(scratch, "two", shared: shared)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)
    let again = try await second.attachment(for: url, timeout: generousTimeout)

    // Then it answered from its own copy of the tier's entry; the origin was asked once
    #expect(answer.source == .cache)
    #expect(answer.path.hasPrefix(scratch.path + "/two/"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(jpeg))
    #expect(again.path == answer.path)
    #expect(second.cache.entry(for: key) != nil)
    #expect(origin.requestCount(path: "/a.jpg") == 1)
  }

  // Caught by the tier cache's own seal (a changed file's change time differs, so its hit
  // re-hashes it) before its read's copy is hashed; a tier that does not catch it is the
  // pipeline's own check's (ExternalTierTests.lyingConformerNotBelieved).
  @Test("a tier's copy changed behind its record (same length) is not served: the origin answers")
  func changedCopyNeverServed() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("shared-tier-corrupt")
    defer { scratch.remove() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    origin.serve("/b.jpg", body: jpeg, contentType: "image/jpeg")
    let url = origin.url("/b.jpg")
    let shared = try AttachmentCache(configuration: CacheConfiguration(directory: scratch.path + "/shared"))
    let first = try Self.pipeline(scratch, "one", shared: shared)
    _ = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))

    // Given the tier's content file changed in place, its length kept
    let key = try #require(URLKey(url))
    let entry = try #require(shared.entry(for: key))
    var damaged = try Data(contentsOf: URL(fileURLWithPath: entry.path))
    damaged[damaged.count / 2] ^= 0xFF
    try damaged.write(to: URL(fileURLWithPath: entry.path))

    // When a second instance asks for the file
    let second = try Self.pipeline(scratch, "two", shared: shared)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)

    // Then it was fetched again, and the bytes it answers are the origin's
    #expect(answer.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(jpeg))
    #expect(origin.requestCount(path: "/b.jpg") == 2)
  }
}
