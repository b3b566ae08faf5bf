import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Records are named by a per-cache secret (issue #25, item 11): two URLs built to collide in
/// one cache's index cannot be built without its key.
@Suite("Cache: record names by a per-cache key", .threadOfItsOwn)
struct RecordKeyTests {
  typealias Fixture = PipelineTests.Fixture

  @Test(
    "a new cache makes a 16-byte key (0600); other caches name the same URL otherwise, the same cache alike")
  func keyPerCache() throws {
    let one = try ScratchDirectory("key-one")
    let two = try ScratchDirectory("key-two")
    defer {
      one.remove()
      two.remove()
    }
    let first = try AttachmentCache(configuration: CacheConfiguration(directory: one.path))
    let other = try AttachmentCache(configuration: CacheConfiguration(directory: two.path))
    let again = try AttachmentCache(configuration: CacheConfiguration(directory: one.path))
    let url = try #require(URLKey("https://example.com/a.jpg"))

    guard case .bytes(let stored) = first.records.read(CacheRecordKey.storedName) else {
      Issue.record("no key in the record store")
      return
    }
    #expect(stored.count == 16)
    var info = stat()
    #expect(lstat(one.path + "/v3/records", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o600)
    let name = first.recordKey.name(for: url)
    #expect(again.recordKey.name(for: url) == name)
    #expect(other.recordKey.name(for: url) != name)
    #expect(name.count == 32)
  }

  @Test(
    "a record under a name that is not its URL's (another key, or before keys) is a miss and the sweep removes it"
  )
  func foreignNameRemoved() async throws {
    // Given a stored GIF whose record is moved to the name an unkeyed hash would have given it
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/k.gif", body: try Samples.bytes("gif-static.gif"), contentType: "image/gif")
    let url = fixture.server.url("/k.gif")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let cache = fixture.pipeline.cache
    let name = cache.recordKey.name(for: try #require(URLKey(url)))
    let foreign = "6c62272e07bb014262b821756295c58d"
    try cache.records.write(sync: false) { (writer) throws(AttachmentError) in
      guard case .bytes(let bytes) = writer.read(name) else { return }
      try writer.put(foreign, bytes)
      writer.remove(name)
    }

    // When the URL is asked for again, then the cache swept
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    _ = try cache.collectGarbage()

    // Then the foreign-named record was not read as the URL's (fetched again) and is gone
    #expect(again.source == .network)
    #expect(cache.records.read(foreign) == .missing)
    #expect(cache.records.read(name) != .missing)
  }
}

/// The record store's own operations against many records (more than one B-tree page).
@Suite("Cache: the record store with many records", .threadOfItsOwn)
struct RecordStoreScaleTests {
  @Test(
    "clear removes every one of 500 records (pages of them), keeps the naming key, and the cache works after")
  func clearManyRecords() async throws {
    let fixture = try PipelineTests.Fixture()
    defer { fixture.close() }
    fixture.server.serve("/s.gif", body: try Samples.bytes("gif-static.gif"), contentType: "image/gif")
    let url = fixture.server.url("/s.gif")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let cache = fixture.pipeline.cache
    let copies = (0..<500).map { "https://example.com/copy/\($0).gif" }
    #expect(try cache.storeCopies(of: url, as: copies) == 500)
    #expect(try cache.stats().entries == 501)
    let key = cache.recordKey.name(for: try #require(URLKey(url)))

    let report = try cache.clear()

    #expect(report.removed >= 501)
    #expect(try cache.stats().entries == 0)
    #expect(cache.records.count() == 1)  // the naming key alone
    let reopened = try AttachmentCache(configuration: fixture.pipeline.configuration.cache)
    #expect(reopened.recordKey.name(for: try #require(URLKey(url))) == key)
    #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .network)
  }
}
