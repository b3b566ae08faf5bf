import Foundation
import Glibc
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The size ledger in the lock file: a run ends at or under the limit, the ledger never
/// undercounts what a run leaves, and an unknown or torn ledger is recounted, never trusted.
@Suite("Cache size ledger", .threadOfItsOwn)
struct CacheLedgerTests {
  typealias Fixture = PipelineTests.Fixture

  /// Serves `count` distinct WAV files (same structure, last byte differs) under `prefix`.
  private static func serveDistinct(_ fixture: Fixture, prefix: String, count: Int, wav: [UInt8]) -> [String]
  {
    (0..<count).map { index in
      var body = wav
      body[body.count - 1] = UInt8(index % 256)
      body[body.count - 2] = UInt8(index / 256)
      fixture.server.serve("/\(prefix)\(index).wav", body: body, contentType: "audio/wav")
      return fixture.server.url("/\(prefix)\(index).wav")
    }
  }

  /// The ledger of the cache at `root`, read the way the cache does (under the lock).
  private static func ledger(_ cache: AttachmentCache) throws -> Int64? {
    try cache.lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int64? in CacheLedger.read(fd) }
  }

  @Test("one publish into a cache another caller left over this caller's limit brings it under")
  func overLimitCacheSweptByNextPublish() async throws {
    // Given a cache filled with 30 files by a caller without a (small) limit
    let wav = try Samples.bytes("wav-pcm16.wav")
    let fixture = try Fixture()
    defer { fixture.close() }
    let urls = Self.serveDistinct(fixture, prefix: "fill", count: 31, wav: wav)
    for url in urls.dropLast() {
      _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    }
    #expect(try Self.ledger(fixture.pipeline.cache) == Int64(wav.count) * 30)

    // When a caller limited to 20 files' worth (sweeping inline) publishes a single file,
    // far less than the fifth of its limit the fixed threshold would wait for
    let limit = Int64(wav.count) * 20
    var configuration = PipelineConfiguration(cacheDirectory: fixture.scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.cache.maximumBytes = limit
    configuration.cache.sweepsInBackground = false
    let limited = try AttachmentPipeline(configuration: configuration)
    let last = try await limited.attachment(for: urls[30], timeout: generousTimeout)

    // Then the cache ends the call at or under that limit, the new file kept, and the ledger
    // says exactly what is there
    let stats = try limited.cache.stats()
    #expect(stats.bytes <= limit, "the cache holds \(stats.bytes) bytes for a limit of \(limit)")
    #expect(FileManager.default.fileExists(atPath: last.path))
    #expect(try Self.ledger(limited.cache) == stats.bytes)
  }

  @Test("concurrent publishes with inline sweeps end at or under the limit; the ledger never undercounts")
  func concurrentRunEndsUnderLimit() async throws {
    // Given a cache limited to 24 files' worth, sweeping inline like the command line (a
    // limit of fewer files than calls in flight can leave young orphans, see README)
    let wav = try Samples.bytes("wav-pcm16.wav")
    let limit = Int64(wav.count) * 24
    let fixture = try Fixture {
      $0.cache.maximumBytes = limit
      $0.cache.sweepsInBackground = false
    }
    defer { fixture.close() }
    let urls = Self.serveDistinct(fixture, prefix: "run", count: 120, wav: wav)

    // When 120 distinct files are fetched 8 at a time
    try await withThrowingTaskGroup(of: Void.self) { group in
      for start in 0..<8 {
        group.addTask {
          for index in stride(from: start, to: urls.count, by: 8) {
            _ = try await fixture.pipeline.attachment(for: urls[index], timeout: generousTimeout)
          }
        }
      }
      try await group.waitForAll()
    }

    // Then the run ends at or under the limit, the ledger is at least what is there, and a
    // quiet sweep makes it exact
    let stats = try fixture.pipeline.cache.stats()
    #expect(stats.bytes <= limit, "the cache holds \(stats.bytes) bytes for a limit of \(limit)")
    let ledger = try #require(try Self.ledger(fixture.pipeline.cache))
    #expect(ledger >= stats.bytes)
    let report = try fixture.pipeline.cache.collectGarbage()
    let after = try fixture.pipeline.cache.stats()
    #expect(
      try Self.ledger(fixture.pipeline.cache) == after.bytes,
      "report \(report), stats \(after), before \(stats)")
  }

  @Test("a torn or old-format ledger is unknown: never trusted, recounted by the next sweep")
  func unknownLedgerIsRecounted() async throws {
    // Given a cache holding 3 files
    let wav = try Samples.bytes("wav-pcm16.wav")
    let fixture = try Fixture()
    defer { fixture.close() }
    let urls = Self.serveDistinct(fixture, prefix: "t", count: 5, wav: wav)
    for url in urls.prefix(3) {
      _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    }
    let lockPath = fixture.scratch.path + "/cache/v3/lock"

    for damage in ["torn", "empty"] {
      // When the lock file's ledger is torn (the check word does not match) or absent (a
      // lock file of an older version, which only locks it)
      if damage == "torn" {
        var words: (UInt64, UInt64) = (UInt64(1 << 40).littleEndian, 12_345)
        let fd = open(lockPath, O_WRONLY)
        #expect(fd >= 0)
        _ = withUnsafeBytes(of: &words) { pwrite(fd, $0.baseAddress, 16, 0) }
        close(fd)
      } else {
        #expect(truncate(lockPath, 0) == 0)
      }

      // Then it reads as unknown, and publishing goes on without counting
      #expect(try Self.ledger(fixture.pipeline.cache) == nil, "\(damage)")
      _ = try await fixture.pipeline.attachment(for: urls[damage == "torn" ? 3 : 4], timeout: generousTimeout)
      #expect(try Self.ledger(fixture.pipeline.cache) == nil, "\(damage)")

      // And the next sweep writes what is really there
      let report = try fixture.pipeline.cache.collectGarbage()
      #expect(report.bytes > 0)
      #expect(try Self.ledger(fixture.pipeline.cache) == report.bytes, "\(damage)")
    }
    #expect(try fixture.pipeline.cache.verify().corrupt == 0)
  }

  @Test("clear forgets the ledger; identical content published twice is counted once")
  func clearAndDuplicates() async throws {
    // Given two URLs serving the same bytes
    let wav = try Samples.bytes("wav-pcm16.wav")
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/same-a.wav", body: wav, contentType: "audio/wav")
    fixture.server.serve("/same-b.wav", body: wav, contentType: "audio/wav")

    // When both are fetched, the content is stored once and counted once
    _ = try await fixture.pipeline.attachment(
      for: fixture.server.url("/same-a.wav"), timeout: generousTimeout)
    _ = try await fixture.pipeline.attachment(
      for: fixture.server.url("/same-b.wav"), timeout: generousTimeout)
    #expect(try Self.ledger(fixture.pipeline.cache) == Int64(wav.count))
    #expect(try fixture.pipeline.cache.stats().bytes == Int64(wav.count))

    // And after clear the ledger is unknown until a sweep counts again
    _ = try fixture.pipeline.cache.clear()
    #expect(try Self.ledger(fixture.pipeline.cache) == nil)
    _ = try fixture.pipeline.cache.collectGarbage()
    #expect(try Self.ledger(fixture.pipeline.cache) == 0)
  }

  @Test("a record replaced since the last collection is read again: eviction follows its new access time")
  func rememberedScanSeesReplacedRecords() async throws {
    // Given 4 entries fetched in order, and a collection that read (and remembered) them all
    let wav = try Samples.bytes("wav-pcm16.wav")
    let fixture = try Fixture { $0.cache.gracePeriodSeconds = 0 }
    defer { fixture.close() }
    let urls = Self.serveDistinct(fixture, prefix: "lru", count: 4, wav: wav)
    let cache = fixture.pipeline.cache
    let keys = try urls.map { try #require(URLKey($0)) }
    let now = FileSystem.now()
    for (index, url) in urls.enumerated() {
      _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
      let entry = try #require(cache.entry(for: keys[index]))
      cache.touch(entry, now: now + Double(index + 1) * 100)  // a strict LRU order
    }
    _ = try cache.collectGarbage()
    #expect(cache.scanMemory.count == 4)

    // When the oldest entry is used again (its record replaced) and the cache is limited to
    // three files' worth (the low watermark keeps two)
    let first = try #require(cache.entry(for: keys[0]))
    cache.touch(first, now: now + 1_000)
    let report = try cache.collectGarbage(maximumBytes: Int64(wav.count) * 3)

    // Then the two least recently used now (entries 1 and 2) went, and entry 0 stayed: a
    // remembered, stale access time would have picked entry 0, whose removal the re-check
    // under the lock refuses, leaving the cache over its low watermark
    #expect(report.evicted == 2)
    #expect(report.bytes <= Int64(Double(wav.count) * 3 * 0.8))
    #expect(cache.entry(for: keys[0]) != nil)
    #expect(cache.entry(for: keys[1]) == nil)
    #expect(cache.entry(for: keys[2]) == nil)
    #expect(cache.entry(for: keys[3]) != nil)
  }

  @Test("a cache with more records than a collection remembers is read in full and remembered not at all")
  func rememberedScanCapacity() async throws {
    // Given a collection that remembers 16 records, and one entry copied under 24 URLs (all
    // pointing at the same content)
    let wav = try Samples.bytes("wav-pcm16.wav")
    let fixture = try Fixture { $0.cache.rememberedRecords = 16 }
    defer { fixture.close() }
    let url = fixture.server.url("/one.wav")
    fixture.server.serve("/one.wav", body: wav, contentType: "audio/wav")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let copies = (0..<24).map { "http://copies.example/\($0).wav" }
    let cache = fixture.pipeline.cache
    #expect(try cache.storeCopies(of: url, as: copies) == copies.count)

    // When it is collected twice
    let first = try cache.collectGarbage()
    #expect(cache.scanMemory.isOverflowed)
    #expect(cache.scanMemory.count == 0)
    let second = try cache.collectGarbage()

    // Then both collections counted every entry, and nothing was remembered
    #expect(first.entries == copies.count + 1)
    #expect(second.entries == copies.count + 1)
    #expect(cache.scanMemory.count == 0)

    // And once the cache is small again, the next collection but one remembers again
    _ = try cache.clear()
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    _ = try cache.collectGarbage()
    #expect(!cache.scanMemory.isOverflowed)
    _ = try cache.collectGarbage()
    #expect(cache.scanMemory.count == 1)
  }
}
