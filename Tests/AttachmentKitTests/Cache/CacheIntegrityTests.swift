import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The cache never serves a wrong byte: damage is found, dropped and refetched.
@Suite("Cache integrity and maintenance", .threadOfItsOwn)
struct CacheIntegrityTests {
  typealias Fixture = PipelineTests.Fixture

  @Test("a byte flipped in a stored object is found by verify and the next call refetches")
  func flippedByte() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-progressive.jpg")
    fixture.server.serve("/f.jpg", body: jpeg, contentType: "image/jpeg")
    let url = fixture.server.url("/f.jpg")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    try Self.flipByte(at: 200, in: first.path)

    let report = try fixture.pipeline.cache.verify()
    #expect(report.corrupt == 1)
    #expect(report.entries == 0)

    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(jpeg))
    #expect(fixture.server.requestCount(path: "/f.jpg") == 2)
  }

  @Test("a byte flipped in a stored object is never served by the next hit: it is refetched")
  func flippedByteOnHit() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-progressive.jpg")
    fixture.server.serve("/h.jpg", body: jpeg, contentType: "image/jpeg")
    let url = fixture.server.url("/h.jpg")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    try Self.flipByte(at: 200, in: first.path)

    // No verify() first: the hit itself must notice (the object's seal no longer matches).
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(jpeg))
    #expect(fixture.server.requestCount(path: "/h.jpg") == 2)
  }

  /// Inverts one byte of the file at `path` in place (same size: only its hash can tell).
  private static func flipByte(at offset: UInt64, in path: String) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: offset)
    let byte = try #require(try handle.read(upToCount: 1)?.first)
    try handle.seek(toOffset: offset)
    try handle.write(contentsOf: Data([byte ^ 0xFF]))
  }

  @Test("a truncated object is a miss: dropped and refetched, never served")
  func truncatedObject() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let mp3 = try Samples.bytes("mp3-no-tag.mp3")
    fixture.server.serve("/t.mp3", body: mp3, contentType: "audio/mpeg")
    let url = fixture.server.url("/t.mp3")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(truncate(first.path, 100) == 0)

    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(mp3))
  }

  @Test("a record whose content is gone is a miss")
  func missingContent() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/m.wav", body: try Samples.bytes("wav-pcm16.wav"), contentType: "audio/wav")
    let url = fixture.server.url("/m.wav")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(unlink(first.path) == 0)
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(again.source == .network)
    #expect(FileManager.default.fileExists(atPath: again.path))
  }

  @Test("garbage collection evicts least recently used entries down to the low watermark")
  func lruEviction() async throws {
    // Given 6 distinct 16 KiB-ish WAV files fetched in order
    let fixture = try Fixture { $0.cache.gracePeriodSeconds = 0 }
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    var urls: [String] = []
    for index in 0..<6 {
      var body = wav
      body[body.count - 1] = UInt8(index)  // distinct content, same structure
      fixture.server.serve("/w\(index).wav", body: body, contentType: "audio/wav")
      urls.append(fixture.server.url("/w\(index).wav"))
    }
    for url in urls {
      _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    }
    // Make the first entry the most recently used
    try setLastAccess(fixture: fixture, url: urls[0], to: FileSystem.now() + 100)

    // When the cache is limited to about three files' worth
    let limit = Int64(wav.count) * 3 + 100
    let report = try fixture.pipeline.cache.collectGarbage(maximumBytes: limit)

    // Then it holds at most 80 % of that, and the recently used entry survived
    #expect(report.bytes <= Int64(Double(limit) * 0.8))
    #expect(report.evicted >= 3)
    #expect(fixture.pipeline.cache.entry(for: try #require(URLKey(urls[0]))) != nil)
    #expect(fixture.pipeline.cache.entry(for: try #require(URLKey(urls[1]))) == nil)
  }

  @Test(
    "a record rewritten between the sweep's scan and its removals (an LRU touch, a rewrite) is not evicted")
  func recordChangedSinceScanStays() async throws {
    // Given three entries unused for ages, no grace period, and no sweep but the test's (one
    // started by a publish could hold the lock when the test's touch tries it)
    let fixture = try Fixture {
      $0.cache.gracePeriodSeconds = 0
      $0.cache.sweepAfterBytes = 1 << 40
    }
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    var urls: [String] = []
    for index in 0..<3 {
      var body = wav
      body[body.count - 1] = UInt8(index)
      fixture.server.serve("/s\(index).wav", body: body, contentType: "audio/wav")
      urls.append(fixture.server.url("/s\(index).wav"))
      _ = try await fixture.pipeline.attachment(for: urls[index], timeout: generousTimeout)
      #expect(try fixture.pipeline.cache.storeCopies(of: urls[index], as: [urls[index]], lastAccess: 1) == 1)
    }
    let cache = fixture.pipeline.cache

    // When a sweep that must evict all three has planned to, and then, before it removes
    // anything, the first is touched by a hit and the second's record rewritten
    let report = try cache.collectGarbage(maximumBytes: 1) {
      let now = FileSystem.now()
      if let key = URLKey(urls[0]), let entry = cache.entry(for: key) { cache.touch(entry, now: now) }
      _ = try? cache.storeCopies(of: urls[1], as: [urls[1]], lastAccess: now)
    }

    // Then the plan evicted three, but the two changed records and their content stay
    #expect(report.evicted == 3)
    for (index, url) in urls.enumerated() {
      let entry = cache.entry(for: try #require(URLKey(url)))
      #expect((entry != nil) == (index < 2), "entry \(index)")
      if let entry { #expect(FileManager.default.fileExists(atPath: entry.path), "content \(index)") }
    }
  }

  @Test("sweeps that evict while publishes land (observed) never remove what a publish returned")
  func sweepDuringWrites() async throws {
    // Given no grace period (only the sweep's own re-checks protect new content), 30 old
    // entries unused for ages, and 40 new bodies served in paced chunks
    let fixture = try Fixture {
      $0.cache.gracePeriodSeconds = 0
      $0.cache.sweepAfterBytes = 1 << 40  // the test drives the sweeps
      $0.cache.sweepSliceOperations = 4  // many short slices, interleaved with publishes
    }
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    func body(_ index: Int) -> [UInt8] {
      var body = wav
      body[body.count - 1] = UInt8(index)
      return body
    }
    let pipeline = fixture.pipeline
    let server = fixture.server
    for index in 0..<30 {
      server.serve("/old\(index).wav", body: body(index), contentType: "audio/wav")
      let url = server.url("/old\(index).wav")
      _ = try await pipeline.attachment(for: url, timeout: generousTimeout)
      #expect(try pipeline.cache.storeCopies(of: url, as: [url], lastAccess: 1) == 1)
    }
    for index in 30..<70 {
      let copy = body(index)
      server.route("/new\(index).wav") { _, writer in
        _ = writer.writeHead(status: 200, headers: [("Content-Length", "\(copy.count)")])
        for start in stride(from: 0, to: copy.count, by: 4096) {
          guard writer.write(Array(copy[start..<min(copy.count, start + 4096)])) else { return }
          _ = writer.sleep(milliseconds: 5)
        }
      }
    }
    // A limit whose low watermark (80 %) holds the 40 new entries but none of the old ones
    let limit = Int64(wav.count) * 52
    let published = Locked(0)
    let missing = Locked<[String]>([])

    // When the 40 are fetched at once while a sweeper collects each time a publish landed
    // (the sweeper stops when all 40 are published, or when the fetches ended without that:
    // a failed fetch fails the test instead of leaving the sweeper waiting for it forever)
    let fetchesEnded = Locked(false)
    async let written: Int = withThrowingTaskGroup(of: Void.self) { group in
      defer { fetchesEnded.withLock { $0 = true } }
      for index in 30..<70 {
        group.addTask {
          let attachment = try await pipeline.attachment(
            for: server.url("/new\(index).wav"), timeout: .seconds(20))
          // What a publish returned must be there, with its bytes
          if FileManager.default.contents(atPath: attachment.path) != Data(body(index)) {
            missing.withLock { $0.append(attachment.path) }
          }
          published.withLock { $0 += 1 }
        }
      }
      try await group.waitForAll()
      return 40
    }
    let sweeps = try await onOwnThread { () -> [(before: Int, after: Int, evicted: Int)] in
      var sweeps: [(before: Int, after: Int, evicted: Int)] = []
      var seen = 0
      while seen < 40 {
        let now = published.withLock { $0 }
        if now == seen {
          if fetchesEnded.withLock({ $0 }) && published.withLock({ $0 }) == seen { break }
          usleep(200)
          continue
        }
        seen = now
        let report = try pipeline.cache.collectGarbage(maximumBytes: limit)
        sweeps.append((now, published.withLock { $0 }, report.evicted))
      }
      return sweeps
    }
    #expect(try await written == 40)

    // Then sweeps overlapped publishes and evicted, and nothing published was lost
    let overlapping = sweeps.filter { $0.before < 40 && $0.after > $0.before }.count
    #expect(overlapping >= 1, "no sweep overlapped a publish: \(sweeps)")
    #expect(sweeps.reduce(0) { $0 + $1.evicted } >= 1, "nothing was evicted: \(sweeps)")
    #expect(missing.withLock { $0 }.isEmpty, "\(missing.withLock { $0 })")
    for index in 30..<70 {
      let key = try #require(URLKey(server.url("/new\(index).wav")))
      #expect(pipeline.cache.entry(for: key) != nil, "new entry \(index) was evicted or broken")
    }
    let verify = try pipeline.cache.verify()
    #expect(verify.corrupt == 0)
    let final = try pipeline.cache.collectGarbage(maximumBytes: limit)
    #expect(final.entries >= 40)
    #expect(final.bytes <= limit)
  }

  @Test("the grace period spares young orphan content and no longer protects old orphan content")
  func gracePeriod() async throws {
    // Given an entry whose record was removed (its content now an orphan)
    let fixture = try Fixture()  // default grace period: 300 s
    defer { fixture.close() }
    fixture.server.serve("/g.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/g.png")
    let attachment = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(try fixture.pipeline.cache.remove(url: url))

    // When collected within the grace period, it stays
    _ = try fixture.pipeline.cache.collectGarbage()
    #expect(FileManager.default.fileExists(atPath: attachment.path), "young orphan content was removed")

    // And once older than the grace period, it goes
    CacheFiles.setModified(attachment.path, to: FileSystem.now() - 301)
    let report = try fixture.pipeline.cache.collectGarbage()
    #expect(!FileManager.default.fileExists(atPath: attachment.path), "old orphan content was kept")
    #expect(report.removed == 1)
  }

  @Test(
    "the automatic sweep, after a fifth of the limit is written, brings the cache under its limit by itself")
  func automaticSweep() async throws {
    // Given a pipeline whose cache holds about six files, its sweeps in the background
    let wav = try Samples.bytes("wav-pcm16.wav")
    let limit = Int64(wav.count) * 6
    let fixture = try Fixture {
      $0.cache.maximumBytes = limit
      $0.cache.gracePeriodSeconds = 0
    }
    defer { fixture.close() }
    // When 20 distinct files are fetched, nobody calling collectGarbage
    for index in 0..<20 {
      var body = wav
      body[body.count - 1] = UInt8(index)
      fixture.server.serve("/a\(index).wav", body: body, contentType: "audio/wav")
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/a\(index).wav"), timeout: generousTimeout)
    }
    // Then, once the last background sweep has run (observed, up to 5 s), the cache is
    // within its limit, and the newest entry is still there
    var bytes = Int64.max
    for _ in 0..<500 {
      bytes = try fixture.pipeline.cache.stats().bytes
      if bytes <= limit { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(bytes <= limit, "the cache holds \(bytes) bytes for a limit of \(limit)")
    #expect(fixture.pipeline.cache.contentPath(forURL: fixture.server.url("/a19.wav")) != nil)
  }

  @Test(
    "a cache directory owned by another user is refused with io_error",
    .requires(
      getuid() == 0, "CacheIntegrityTests.foreignDirectory()",
      "only root can give a directory to another user"))
  func foreignDirectory() throws {
    let scratch = try ScratchDirectory("foreign")
    defer { scratch.remove() }
    #expect(chown(scratch.path, 65_534, 65_534) == 0)
    do {
      _ = try AttachmentCache(configuration: CacheConfiguration(directory: scratch.path))
      Issue.record("expected io_error")
    } catch {
      #expect(error.code == .ioError)
      #expect(error.message.contains("belongs to another user"))
    }
  }

  @Test("a world-writable cache directory is refused with io_error")
  func unsafeDirectory() throws {
    let scratch = try ScratchDirectory("perm")
    defer { scratch.remove() }
    chmod(scratch.path, 0o777)
    do {
      _ = try AttachmentCache(configuration: CacheConfiguration(directory: scratch.path))
      Issue.record("expected io_error")
    } catch {
      #expect(error.code == .ioError)
      #expect(error.message.contains("writable by everyone"))
    }
  }

  @Test("the cache creates its directories 0700 and its files 0600")
  func permissions() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/p.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let attachment = try await fixture.pipeline.attachment(
      for: fixture.server.url("/p.png"), timeout: generousTimeout)
    let root = fixture.scratch.path + "/cache"
    let contentShard = (attachment.path as NSString).deletingLastPathComponent
    for directory in [root, root + "/v3", root + "/v3/content", contentShard, root + "/v3/tmp"] {
      let mode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
      #expect(mode == 0o700, "\(directory)")
    }
    for file in [attachment.path, root + "/v3/records", root + "/v3/records-lock", root + "/v3/lock"] {
      let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
      #expect(mode == 0o600, "\(file)")
    }
  }

  private func setLastAccess(fixture: Fixture, url: String, to time: Double) throws {
    let key = try #require(URLKey(url))
    let entry = try #require(fixture.pipeline.cache.entry(for: key))
    fixture.pipeline.cache.touch(entry, now: time)
  }
}
