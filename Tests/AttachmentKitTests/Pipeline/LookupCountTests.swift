import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// One cache lookup per input, counted where it happens: every lookup reads the URL's record
/// file (`ROOT/v2/index/D/DIGEST`), so strace's read-only opens of that file, per URL, are the
/// lookups the command line made.
@Suite("One cache lookup per input", .threadOfItsOwn)
struct LookupCountTests {
  /// Read-only opens of each URL's record file in strace's `lines`, by URL.
  static func recordReads(_ lines: [Substring], cache: String, urls: [String]) -> [String: Int] {
    var reads: [String: Int] = [:]
    let opened = try? AttachmentCache(configuration: CacheConfiguration(directory: cache))
    for url in urls {
      guard let path = opened?.recordPath(forURL: url) else { continue }
      let record = "\(path)\""
      reads[url] = lines.filter { $0.contains(record) && $0.contains("O_RDONLY") }.count
    }
    return reads
  }

  @Test("fetch: each URL is looked up once, on a miss (the fast path hands its lookup on) and on a hit")
  func fetch() async throws {
    let scratch = try ScratchDirectory("lookups-fetch")
    defer { scratch.remove() }
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let urls = try SharedCacheTests.serveWAVs(server, count: 3)
    let cache = scratch.path + "/cache"

    // When three URLs are fetched into a new cache, then fetched again (all hits)
    let (missStatus, missLines) = try await straceAttachkit(
      "open,openat", ["fetch", "--json", "--cache-dir", cache] + urls, log: scratch.path + "/miss.log")
    let (hitStatus, hitLines) = try await straceAttachkit(
      "open,openat", ["fetch", "--json", "--cache-dir", cache] + urls, log: scratch.path + "/hit.log")

    // Then each run read each record exactly once
    #expect(missStatus == 0 && hitStatus == 0)
    #expect(
      Self.recordReads(missLines, cache: cache, urls: urls)
        == Dictionary(uniqueKeysWithValues: urls.map { ($0, 1) }))
    #expect(
      Self.recordReads(hitLines, cache: cache, urls: urls)
        == Dictionary(uniqueKeysWithValues: urls.map { ($0, 1) }))
    #expect(server.requestCount(path: "/d/0.wav") == 1)
  }

  @Test("prefetch: each URL is looked up once")
  func prefetch() async throws {
    let scratch = try ScratchDirectory("lookups-prefetch")
    defer { scratch.remove() }
    let (urls, cache, status, lines) = try await SharedCacheTests.tracedPrefetch(
      count: 12, scratch: scratch, trace: "open,openat")
    #expect(status == 0)
    #expect(
      Self.recordReads(lines, cache: cache, urls: urls)
        == Dictionary(uniqueKeysWithValues: urls.map { ($0, 1) }))
  }
}
