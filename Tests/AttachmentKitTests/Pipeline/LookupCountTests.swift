import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// One cache lookup per input. In the process, the cache's own count of lookups; in the command
/// line, where a lookup reads its record from a memory map (no system call), a hit's lookup is
/// seen as the one `lstat` of the entry's content file it makes (nothing else on a hit looks at
/// that file), so strace's stats of each content path, per URL, are the lookups a run made.
@Suite("One cache lookup per input", .threadOfItsOwn)
struct LookupCountTests {
  typealias Fixture = PipelineTests.Fixture

  /// Stats of each URL's content file in strace's `lines`, by URL.
  static func contentStats(_ lines: [Substring], cache: String, urls: [String]) -> [String: Int] {
    var stats: [String: Int] = [:]
    let opened = try? AttachmentCache(configuration: CacheConfiguration(directory: cache))
    for url in urls {
      guard let path = opened?.contentPath(forURL: url) else { continue }
      let quoted = "\"\(path)\""
      stats[url] = lines.filter { $0.contains(quoted) && $0.contains("stat") }.count
    }
    return stats
  }

  @Test("the pipeline looks each input up once, on a miss and on a hit")
  func pipeline() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let urls = try SharedCacheTests.serveWAVs(fixture.server, count: 3)
    let cache = fixture.pipeline.cache

    // When three URLs are fetched into a new cache, then fetched again (all hits)
    let before = cache.lookupCount
    for url in urls { _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout) }
    let afterMisses = cache.lookupCount
    for url in urls {
      #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .cache)
    }

    // Then each pass made exactly one lookup per input
    #expect(afterMisses - before == 3)
    #expect(cache.lookupCount - afterMisses == 3)
  }

  @Test("fetch: each URL is looked up once on a hit (the fast path hands its lookup on)")
  func fetch() async throws {
    let scratch = try ScratchDirectory("lookups-fetch")
    defer { scratch.remove() }
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let urls = try SharedCacheTests.serveWAVs(server, count: 3)
    let cache = scratch.path + "/cache"

    // When three URLs are fetched into a new cache, then fetched again (all hits) under strace
    let (missStatus, _) = try await straceAttachkit(
      "open,openat", ["fetch", "--json", "--cache-dir", cache] + urls, log: scratch.path + "/miss.log")
    let (hitStatus, hitLines) = try await straceAttachkit(
      "newfstatat,lstat,stat,statx", ["fetch", "--json", "--cache-dir", cache] + urls,
      log: scratch.path + "/hit.log")

    // Then the hits looked at each content file exactly once
    #expect(missStatus == 0 && hitStatus == 0)
    #expect(
      Self.contentStats(hitLines, cache: cache, urls: urls)
        == Dictionary(uniqueKeysWithValues: urls.map { ($0, 1) }))
    #expect(server.requestCount(path: "/d/0.wav") == 1)
  }

  @Test("prefetch: each URL is looked up once on a hit")
  func prefetch() async throws {
    let scratch = try ScratchDirectory("lookups-prefetch")
    defer { scratch.remove() }
    let (urls, cache, status, _) = try await SharedCacheTests.tracedPrefetch(
      count: 12, scratch: scratch, trace: "open,openat")
    #expect(status == 0)
    let (hitStatus, hitLines) = try await straceAttachkit(
      "newfstatat,lstat,stat,statx",
      ["prefetch", "--json", "-j", "4", "--cache-dir", cache, scratch.path + "/urls.txt"],
      log: scratch.path + "/hit.log")
    #expect(hitStatus == 0)
    #expect(
      Self.contentStats(hitLines, cache: cache, urls: urls)
        == Dictionary(uniqueKeysWithValues: urls.map { ($0, 1) }))
  }
}
