import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Purge (issue #37, item 6): `removeEntries(for:)` drops the entries of URLs, and content only
/// when no other entry uses it.
@Suite("Cache: removing entries", .threadOfItsOwn)
struct CacheRemovalTests {
  private static func ledger(_ cache: AttachmentCache) throws -> Int64? {
    try cache.lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int64? in CacheLedger.read(fd) }
  }

  @Test(
    "two URLs of one file: the first removal keeps the shared content, the second removes it and its bytes")
  func sharedContentStays() async throws {
    let fixture = try PipelineFixture("cache-rm")
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    let gif = try Samples.bytes("gif-static.gif")
    for path in ["/a.jpg", "/b.jpg"] {
      fixture.server.serve(
        path, body: jpeg, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=600")])
    }
    fixture.server.serve(
      "/c.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=600")])
    let a = try AttachmentURL(fixture.server.url("/a.jpg"))
    let b = try AttachmentURL(fixture.server.url("/b.jpg"))
    let c = try AttachmentURL(fixture.server.url("/c.gif"))
    let pipeline = fixture.pipeline
    let path = try await pipeline.attachment(AttachmentRequest(url: a, deadline: .now + generousTimeout)).path
    _ = try await pipeline.attachment(AttachmentRequest(url: b, deadline: .now + generousTimeout))
    _ = try await pipeline.attachment(AttachmentRequest(url: c, deadline: .now + generousTimeout))
    #expect(try Self.ledger(pipeline.cache) == Int64(jpeg.count + gif.count))

    // Removing A: its entry goes, the content B uses stays, and B is still a hit
    let first = try pipeline.cache.removeEntries(for: [a])
    #expect(first.outcomes.map(\.outcome) == [.removed])
    #expect(first.contentFilesRemoved == 0)
    #expect(FileManager.default.fileExists(atPath: path))
    guard case .miss = pipeline.lookup(a) else { throw RemovalError.unexpected("A is not a miss") }
    guard case .hit = pipeline.lookup(b) else { throw RemovalError.unexpected("B is not a hit") }

    // Removing B (and A again, not cached now): the content goes, and leaves the ledger
    let second = try pipeline.cache.removeEntries(for: [b, a])
    #expect(second.outcomes.map(\.outcome) == [.removed, .notCached])
    #expect(second.contentFilesRemoved == 1 && second.bytesRemoved == Int64(jpeg.count))
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(try Self.ledger(pipeline.cache) == Int64(gif.count))
    guard case .hit = pipeline.lookup(c) else { throw RemovalError.unexpected("C is not a hit") }

    // The next request for A fetches it again
    let again = try await pipeline.attachment(AttachmentRequest(url: a, deadline: .now + generousTimeout))
    #expect(again.source == .network)
    #expect(fixture.server.requestCount(path: "/a.jpg") == 2)
    #expect(try pipeline.cache.verify().corrupt == 0)
  }

  @Test(
    "a URL is removed under the cache's key rules: another presigned URL of the object finds its entry, kept unless forced (it may be forged)"
  )
  func keyedByRules() async throws {
    let fixture = try PipelineFixture("cache-rm-keys") {
      $0.cache.keyRules = (try? CacheKeyRules(["preset:s3"])) ?? .none
    }
    defer { fixture.close() }
    fixture.server.serve(
      "/k.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    let base = fixture.server.url("/k.jpg")
    _ = try await fixture.pipeline.attachment(
      for: base + "?X-Amz-Signature=1", deadline: .now + generousTimeout)
    let other = try AttachmentURL(base + "?X-Amz-Signature=2")
    let kept = try fixture.pipeline.cache.removeEntries(for: [other])
    #expect(kept.outcomes.map(\.outcome) == [.unconfirmed])
    #expect(kept.contentFilesRemoved == 0)
    let removal = try fixture.pipeline.cache.removeEntries(for: [other], force: true)
    #expect(removal.outcomes.map(\.outcome) == [.removed])
    #expect(removal.contentFilesRemoved == 1)
  }

  enum RemovalError: Error { case unexpected(String) }
}
