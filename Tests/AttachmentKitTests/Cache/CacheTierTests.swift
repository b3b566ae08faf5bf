import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The pipeline stores answers only through ``CacheTier``: a tier put in front of the disk
/// cache sees every call of a miss, a hit, a `304` and a `no-store` answer.
@Suite("Cache: the tier seam", .threadOfItsOwn)
struct CacheTierTests {
  /// Passes every call on to the disk cache and notes its name.
  final class RecordingTier: CacheTier {
    let disk: AttachmentCache
    private let noted = Locked<[String]>([])

    init(disk: AttachmentCache) { self.disk = disk }

    /// The calls noted since the last time this was asked.
    func takeCalls() -> [String] {
      noted.withLock { calls in
        defer { calls.removeAll() }
        return calls
      }
    }

    private func note(_ call: String) { noted.withLock { $0.append(call) } }

    func entry(for key: URLKey) -> CacheEntry? {
      note("entry")
      return disk.entry(for: key)
    }

    func touch(_ entry: CacheEntry, now: Double) {
      note("touch")
      disk.touch(entry, now: now)
    }

    func makeBodyFile() throws(AttachmentError) -> CacheBodyFile {
      note("makeBodyFile")
      return try disk.makeBodyFile()
    }

    func publish(
      body: CacheBodyFile, validation: Validation, key: URLKey, validators: StoredValidators,
      peer: PeerAddressClass?, freshness: Freshness.Policy, now: Double
    ) throws(AttachmentError) -> CacheEntry {
      note("publish")
      return try disk.publish(
        body: body, validation: validation, key: key, validators: validators, peer: peer,
        freshness: freshness,
        now: now)
    }

    func refresh(
      _ entry: CacheEntry, validators: StoredValidators, freshness: Freshness.Policy, now: Double
    ) throws(AttachmentError) -> CacheEntry? {
      note("refresh")
      return try disk.refresh(entry, validators: validators, freshness: freshness, now: now)
    }

    func stash(body: CacheBodyFile, validation: Validation) throws(AttachmentError) -> String {
      note("stash")
      return try disk.stash(body: body, validation: validation)
    }

    func releaseUnindexed(_ path: String) -> Bool {
      note("releaseUnindexed")
      return disk.releaseUnindexed(path)
    }

    func remove(key: URLKey) throws(AttachmentError) -> Bool {
      note("remove")
      return try disk.remove(key: key)
    }

    func collectGarbage(maximumBytes: Int64?) throws(AttachmentError) -> CacheReport {
      note("collectGarbage")
      return try disk.collectGarbage(maximumBytes: maximumBytes)
    }
  }

  @Test("a miss, a hit, a 304, a no-store answer and a removal go through the tier, call by call")
  func everyCallThroughTheTier() async throws {
    // Given a fresh JPEG, a GIF stale at once (revalidated by its ETag) and a no-store PNG,
    // and a pipeline whose tier records its calls in front of the disk cache
    let fixture = try PipelineFixture("tier")
    defer { fixture.close() }
    fixture.server.serve(
      "/f.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    fixture.server.serve(
      "/s.gif", body: try Samples.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "max-age=0")], etag: "\"g1\"")
    fixture.server.serve(
      "/n.png", body: try Samples.bytes("png-rgba.png"), contentType: "image/png",
      headers: [("Cache-Control", "no-store")])
    let recording = Locked<RecordingTier?>(nil)
    let pipeline = try AttachmentPipeline(configuration: fixture.pipeline.configuration, observer: nil) {
      disk in
      let tier = RecordingTier(disk: disk)
      recording.withLock { $0 = tier }
      return tier
    }
    let tier = try #require(recording.withLock { $0 })
    func fetch(_ path: String) async throws -> AttachmentKit.Attachment {
      try await pipeline.attachment(for: fixture.server.url(path), deadline: .now + generousTimeout)
    }

    // A miss: looked up, a body file made, published
    #expect(try await fetch("/f.jpg").source == .network)
    #expect(tier.takeCalls() == ["entry", "makeBodyFile", "publish"])
    // A hit: looked up, marked used
    #expect(try await fetch("/f.jpg").source == .cache)
    #expect(tier.takeCalls() == ["entry", "touch"])
    // A 304: looked up (stale), a body file made for the conditional fetch, refreshed
    _ = try await fetch("/s.gif")
    _ = tier.takeCalls()
    #expect(try await fetch("/s.gif").source == .revalidated)
    #expect(tier.takeCalls() == ["entry", "makeBodyFile", "refresh"])  // the 304 left its body file unused
    // A no-store answer: stashed outside the index, then released
    let unindexed = try await fetch("/n.png")
    #expect(unindexed.isUnindexed)
    #expect(tier.takeCalls() == ["entry", "makeBodyFile", "stash"])
    #expect(pipeline.release(unindexed))
    #expect(tier.takeCalls() == ["releaseUnindexed"])
    // A removed entry is a miss again
    #expect(try fixture.pipeline.cache.remove(url: fixture.server.url("/f.jpg")))
    #expect(try await fetch("/f.jpg").source == .network)
    #expect(fixture.server.requestCount(path: "/f.jpg") == 2)
  }
}
