import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The cache shared between processes: its layout (two inodes per entry, no directory per
/// entry, old formats ignored), ownership of bodies in flight without process ids, hits
/// that never wait for a lock, and re-checked writes.
@Suite("Shared cache: layout, ownership, locking", .serialized, .threadOfItsOwn)
struct SharedCacheTests {
  typealias Fixture = PipelineTests.Fixture

  /// Serves `count` distinct WAVs under `/d/N.wav` and returns their URLs.
  static func serveWAVs(_ server: TestHTTPServer, count: Int, prefix: String = "/d/") throws -> [String] {
    let wav = try Samples.bytes("wav-pcm16.wav")
    return (0..<count).map { index in
      var body = wav
      body[body.count - 1] = UInt8(index % 256)
      body[body.count - 2] = UInt8(index / 256)
      server.serve("\(prefix)\(index).wav", body: body, contentType: "audio/wav")
      return server.url("\(prefix)\(index).wav")
    }
  }

  /// Serves `count` distinct WAVs from a new loopback server and runs `attachkit prefetch` of
  /// them (`-j 4`, plus `options`) into `scratch/cache` under strace (with `straceOptions`),
  /// tracing `trace`; the
  /// server stops when it returns. Answers the URLs, the cache, the exit status and strace's
  /// lines.
  static func tracedPrefetch(
    count: Int, scratch: ScratchDirectory, trace: String, options: [String] = [], straceOptions: [String] = []
  ) async throws -> (urls: [String], cache: String, status: Int32, lines: [Substring]) {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let urls = try serveWAVs(server, count: count)
    let list = scratch.path + "/urls.txt"
    try writeTestFile(urls.joined(separator: "\n"), to: list)
    let cache = scratch.path + "/cache"
    let (status, lines) = try await straceAttachkit(
      trace, ["prefetch", "--json", "-j", "4", "--cache-dir", cache] + options + [list],
      log: scratch.path + "/strace.log", options: straceOptions)
    return (urls, cache, status, lines)
  }

  // MARK: - Layout

  @Test(
    "an entry costs at most 1.1 inodes (its content; records share one store); directories are the 16 fan-out ones, each made once on first use: every inode-creating call of a prefetch, counted"
  )
  func inodesPerEntry() async throws {
    let scratch = try ScratchDirectory("inodes")
    defer { scratch.remove() }

    // When a prefetch of 80 entries into a new cache runs under strace
    let (urls, cache, status, lines) = try await Self.tracedPrefetch(
      count: 80, scratch: scratch,
      trace: "open,openat,creat,mkdir,mkdirat,mknod,mknodat,link,linkat,symlink,symlinkat")
    #expect(status == 0)

    // Then every call that can allocate an inode under the cache is counted: a file opened
    // O_CREAT (made or not), O_TMPFILE, creat, a directory, a node or a symbolic link
    var files = 0
    var directories: [Substring] = []
    var other: [Substring] = []
    for line in lines where line.contains(cache) {
      guard
        let result = line.split(separator: "=").last.flatMap({
          Int($0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " })
        }),
        result >= 0
      else { continue }
      if line.contains("mkdir") {
        directories.append(line)
      } else if line.contains("O_TMPFILE") || line.contains("O_CREAT") || line.contains("creat(") {
        files += 1
      } else if line.contains("mknod") || line.contains("symlink") {
        other.append(line)
      }
    }
    #expect(try AttachmentCache(configuration: CacheConfiguration(directory: cache)).stats().entries == 80)
    // The cache's own directories (root, v3, content, tmp) and the fan-out directories the
    // entries landed in, each once: no directory per entry.
    let fanOut = ((try? FileManager.default.contentsOfDirectory(atPath: "\(cache)/v3/content")) ?? []).map {
      "\(cache)/v3/content/\($0)\""
    }
    let made = directories.compactMap { line in fanOut.first { line.contains($0) } }
    #expect(made.count == fanOut.count && Set(made).count == made.count, "\(directories)")
    #expect(directories.count - made.count <= 4, "beyond the fan-out: \(directories)")
    #expect(fanOut.count <= CacheLayout.shards.count)
    #expect(other.isEmpty, "\(other)")
    // The whole cache's files (the record store, its readers' table, the lock) are among them.
    #expect(
      Double(files) <= 1.1 * Double(urls.count),
      "\(files) inodes for \(urls.count) entries: more than 1.1 an entry")
    #expect(files >= urls.count, "the count saw too few creations (\(files)): is strace tracing the writer?")
  }

  @Test("a new entry is one link (its content); no record file, no rename")
  func oneLinkPerEntry() async throws {
    let scratch = try ScratchDirectory("direct")
    defer { scratch.remove() }

    // When a prefetch of 20 new entries runs under strace
    let (urls, cache, status, lines) = try await Self.tracedPrefetch(
      count: 20, scratch: scratch, trace: "link,linkat,rename,renameat,renameat2")
    #expect(status == 0)

    // Then each entry is one successful link, into the content directory, and nothing under
    // the cache is renamed
    let succeeded = lines.filter { $0.contains(cache) && $0.hasSuffix("= 0") }
    let renames = succeeded.filter { $0.contains("rename") }
    let links = succeeded.filter { $0.contains("link") }
    #expect(renames.isEmpty, "\(renames.prefix(3))")
    #expect(links.count == urls.count, "\(links.count) links for \(urls.count) entries")
    #expect(links.allSatisfy { $0.contains(cache + "/v3/content/") }, "\(links.prefix(3))")
    let reopened = try AttachmentCache(configuration: CacheConfiguration(directory: cache))
    #expect(try reopened.stats().entries == urls.count)
    #expect(try reopened.verify().corrupt == 0)
  }

  @Test("version 1 and 2 caches are never read, never crash, and are removed by the next sweep")
  func legacyLayout() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let root = fixture.pipeline.configuration.cache.directory
    let url = fixture.server.url("/l.png")
    fixture.server.serve("/l.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    // An old tree with a record for the same URL and garbage content
    for directory in ["/v1/content/ab/cd", "/v1/index/12", "/v1/tmp"] {
      try FileManager.default.createDirectory(atPath: root + directory, withIntermediateDirectories: true)
    }
    try "v 1\nurl \(url)\nsha256 abcd\n".write(
      toFile: root + "/v1/index/12/1234", atomically: true, encoding: .utf8)
    try writeTestFile(Data(repeating: 7, count: 100), to: root + "/v1/content/ab/cd/abcd.png")
    // A version 2 tree (a file per record) with a record of the URL pointing at other content
    let wrong = String(repeating: "e", count: 64)
    for directory in ["/v2/content/e", "/v2/index/1", "/v2/tmp"] {
      try FileManager.default.createDirectory(atPath: root + directory, withIntermediateDirectories: true)
    }
    try "v 2\nurl \(url)\nsha256 \(wrong)\nbytes 100\ntype image/png\nfetched 1\nfresh 9999999999\naccess 1\n"
      .write(toFile: root + "/v2/index/1/1234", atomically: true, encoding: .utf8)
    try writeTestFile(Data(repeating: 7, count: 100), to: root + "/v2/content/e/\(wrong).png")

    let reopened = try AttachmentPipeline(configuration: fixture.pipeline.configuration)
    #expect(try await reopened.attachment(for: url, timeout: generousTimeout).source == .network)
    let report = try reopened.cache.collectGarbage()
    #expect(!FileManager.default.fileExists(atPath: root + "/v1"))
    #expect(!FileManager.default.fileExists(atPath: root + "/v2"))
    #expect(report.entries == 1)
    #expect(try await reopened.attachment(for: url, timeout: generousTimeout).source == .cache)
  }

  // MARK: - Ownership without process ids

  @Test("an abandoned body file goes at a process's first miss; a process that only hits leaves it")
  func abandonedAtFirstMiss() async throws {
    // Given a cached entry, and an abandoned named body file (a writer killed mid-transfer)
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/a.png", body: try Samples.bytes("png-rgba.png"))
    fixture.server.serve("/b.gif", body: try Samples.bytes("gif-static.gif"))
    _ = try await fixture.pipeline.attachment(for: fixture.server.url("/a.png"), timeout: generousTimeout)
    let abandoned = fixture.pipeline.cache.layout.temporary + "/.body-0123456789abcdef.part"
    #expect(FileManager.default.createFile(atPath: abandoned, contents: Data([1, 2, 3])))

    // When another opener (a new process's pipeline) hits
    let other = try AttachmentPipeline(configuration: fixture.pipeline.configuration)
    let hit = try await other.attachment(for: fixture.server.url("/a.png"), timeout: generousTimeout)

    // Then the hit did not look at the temporary directory: the file is still there
    #expect(hit.source == .cache)
    #expect(FileManager.default.fileExists(atPath: abandoned))
    // and its first miss removes it
    _ = try await other.attachment(for: fixture.server.url("/b.gif"), timeout: generousTimeout)
    #expect(!FileManager.default.fileExists(atPath: abandoned))
  }

  @Test(
    "named body files (no O_TMPFILE): a live writer's file survives another opener, an abandoned one goes")
  func namedBodyOwnership() async throws {
    // Given a pipeline forced onto named body files, fetching a slow body
    let fixture = try Fixture { $0.cache.anonymousBodyFiles = false }
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    let sent = Locked(0)
    let finish = Locked(false)
    fixture.server.route("/slow.wav") { _, writer in
      _ = writer.writeHead(status: 200, headers: [("Content-Length", "\(wav.count)")])
      for start in stride(from: 0, to: wav.count, by: 2048) {
        // The last chunk waits for the test's checks (the bound only stops a broken test)
        var waited = 0
        while start + 2048 >= wav.count, !finish.withLock({ $0 }), waited < 10_000 {
          _ = writer.sleep(milliseconds: 5)
          waited += 5
        }
        guard writer.write(Array(wav[start..<min(wav.count, start + 2048)])) else { return }
        sent.withLock { $0 += 1 }
      }
    }
    let temporary = fixture.pipeline.cache.layout.temporary

    let pipeline = fixture.pipeline
    let url = fixture.server.url("/slow.wav")
    async let fetched = pipeline.attachment(for: url, timeout: .seconds(10))
    // When the body is in flight (the server has sent some of it; the bound only stops a
    // broken test)
    let inFlight = ContinuousClock.now + .seconds(5)
    while sent.withLock({ $0 }) < 2 && ContinuousClock.now < inFlight {
      try await Task.sleep(for: .milliseconds(10))
    }
    // and an abandoned body file appears (nobody holds its lock; made after this pipeline's
    // first miss, which looked for such files itself)
    let abandoned = temporary + "/.body-0123456789abcdef.part"
    #expect(FileManager.default.createFile(atPath: abandoned, contents: Data([1, 2, 3])))
    let live =
      FileManager.default.fileExists(atPath: abandoned)
      ? (try FileManager.default.contentsOfDirectory(atPath: temporary)).filter {
        $0.hasSuffix(".part") && $0 != ".body-0123456789abcdef.part"
      }
      : []
    #expect(live.count == 1, "the writer's named body file: \(live)")
    // And another process-like opener sweeps the temporary directory
    _ = try AttachmentCache(configuration: pipeline.configuration.cache)

    // Then the abandoned file is gone, the live one stays and is published
    #expect(!FileManager.default.fileExists(atPath: abandoned))
    for name in live { #expect(FileManager.default.fileExists(atPath: temporary + "/" + name)) }
    finish.withLock { $0 = true }
    let attachment = try await fetched
    #expect(try Data(contentsOf: URL(fileURLWithPath: attachment.path)) == Data(wav))
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  // MARK: - Locking

  @Test("a hit answers at once while another process holds the cache lock, skipping its LRU update")
  func hitNeverWaits() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/h.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/h.png")
    let cache = fixture.pipeline.cache
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    // A second URL for the same content, unused for ages: its next hit wants the lock (LRU)
    let old = fixture.server.url("/h.png?old")
    #expect(try cache.storeCopies(of: url, as: [old], lastAccess: 1_000) == 1)
    let oldKey = try #require(URLKey(old))
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)  // warm

    // Given another process holding the lock (as a sweep would)
    // (flock runs `cat`, which holds on until its standard input closes)
    let holder = Process()
    let input = Pipe.closingOnExec()
    holder.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
    holder.arguments = [cache.layout.lockFile, "cat"]
    holder.standardInput = input
    holder.standardOutput = FileHandle.nullDevice
    try holder.runClosingChildEnds()
    defer { try? input.fileHandleForWriting.close() }  // `cat` then exits; Foundation reaps it
    let locked = ContinuousClock.now + .seconds(5)  // only stops a broken test
    while cache.lock.withExclusiveLockIfFree({ true }) != nil && ContinuousClock.now < locked {
      try await Task.sleep(for: .milliseconds(10))
    }
    try #require(cache.lock.withExclusiveLockIfFree({ true }) == nil, "flock never took the lock")

    // When the old entry is hit (should the hit wait for the lock, the holder lets go after
    // 3 s so the test fails instead of hanging)
    let writer = input.fileHandleForWriting
    DispatchQueue.global().asyncAfter(deadline: .now() + 3) { try? writer.close() }
    let (attachment, seconds) = try await measure {
      try await fixture.pipeline.attachment(for: old, timeout: generousTimeout)
    }

    // Then it answers at once from the cache, and its access time is left for later: a hit
    // that waited for the lock would take the holder's 3 s and then record its use. (How fast
    // a hit is, is measured in Benchmarks: hit_p50_us, hit_p99_us.)
    #expect(attachment.source == .cache)
    #expect(
      seconds < deadlineMarginSeconds,
      "a cache hit took \(Int(seconds * 1000)) ms while another process held the cache lock (a hit must never wait for a sweep)"
    )
    #expect(cache.currentRecord(digest: cache.recordKey.name(for: oldKey))?.lastAccess == 1_000)
    try input.fileHandleForWriting.close()
    await holder.exitStatus()
    #expect(cache.lock.withExclusiveLockIfFree({ true }) == true)

    // And with the lock free, the next hit records its use
    _ = try await fixture.pipeline.attachment(for: old, timeout: generousTimeout)
    #expect((cache.currentRecord(digest: cache.recordKey.name(for: oldKey))?.lastAccess ?? 0) > 1_000)
  }

  @Test("touch and refresh re-read the record under the lock: a newer record is never overwritten")
  func noLostUpdates() async throws {
    // Given an entry read by one caller, then replaced by another publish (new content)
    let fixture = try Fixture()
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    var changed = wav
    changed[changed.count - 1] ^= 0xFF
    fixture.server.serve("/r.wav", body: wav, contentType: "audio/wav", etag: "\"a\"")
    let url = fixture.server.url("/r.wav")
    let cache = fixture.pipeline.cache
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let key = try #require(URLKey(url))
    let seen = try #require(cache.entry(for: key))
    fixture.server.serve("/r.wav", body: changed, contentType: "audio/wav", etag: "\"b\"")
    let newer = try await fixture.pipeline.attachment(
      AttachmentRequest(url: url, timeout: generousTimeout, cachePolicy: .reload))
    #expect(newer.sha256 != seen.record.validation.sha256)

    // When the first caller's touch and refresh arrive late
    cache.touch(seen, now: seen.record.lastAccess + 1_000)
    let refreshed = try #require(
      try cache.refresh(
        seen, validators: StoredValidators(), freshness: Freshness.Policy(lifetime: 60), now: FileSystem.now()
      ))

    // Then the newer record stands, and the refresh answers with it
    #expect(cache.currentRecord(digest: cache.recordKey.name(for: key))?.validation.sha256 == newer.sha256)
    #expect(refreshed.record.validation.sha256 == newer.sha256)
    #expect(try Data(contentsOf: URL(fileURLWithPath: refreshed.path)) == Data(changed))
  }

  @Test("a 304 for a copy another process's sweep removed meanwhile is fetched again, not an error")
  func revalidatedCopyRemoved() async throws {
    // Given a stale entry, and a server that (like a sweep elsewhere) removes the cached
    // content when the conditional request arrives, then answers 304
    let fixture = try Fixture()
    defer { fixture.close() }
    let png = try Samples.bytes("png-gray.png")
    let cachedPath = Locked<String?>(nil)
    fixture.server.route("/v.png") { request, writer in
      if request.header("If-None-Match") != nil {
        if let path = cachedPath.withLock({ $0 }) { unlink(path) }
        _ = writer.respond(status: 304, headers: [("ETag", "\"p\""), ("Cache-Control", "max-age=0")])
        return
      }
      _ = writer.respond(
        status: 200,
        headers: [("ETag", "\"p\""), ("Cache-Control", "max-age=0"), ("Content-Type", "image/png")],
        body: png)
    }
    let url = fixture.server.url("/v.png")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    cachedPath.withLock { $0 = first.path }

    // When it is asked for again
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then the answer is the file, downloaded again after the 304, present with its bytes
    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(png))
    #expect(fixture.server.requestCount(path: "/v.png") == 3)
  }

  // MARK: - Hardening

  @Test(
    "a record that does not parse, or is too big to be one, is a miss: the hit drops it, or verify removes it"
  )
  func damagedRecords() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let urls = try Self.serveWAVs(fixture.server, count: 3)
    let cache = fixture.pipeline.cache
    for url in urls { _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout) }
    // Text that is no record, and a value of 80 KB (no record is bigger than 64 KiB)
    try cache.replaceRecordText("garbage-without-a-space", forURL: urls[0])
    try cache.replaceRecordText(String(repeating: "warning x\n", count: 8_000), forURL: urls[1])

    let keys = try urls.map { try #require(URLKey($0)) }
    let lookups = await onOwnThread { keys.map { cache.entry(for: $0) == nil } }
    #expect(lookups == [true, true, false])
    // (the hit dropped the record that does not parse, the lock being free; not the big one)
    #expect(cache.recordText(forURL: urls[0]) == nil)
    #expect(cache.records.read(cache.recordKey.name(for: keys[1])) == .damaged)

    let report = try cache.verify()
    #expect(report.corrupt == 1)
    #expect(cache.records.read(cache.recordKey.name(for: keys[1])) == .missing)
    #expect(report.entries == 1)
    #expect(try await fixture.pipeline.attachment(for: urls[1], timeout: generousTimeout).source == .network)
  }

  @Test(
    "one cache named two ways in a process (through a symbolic link) is one store environment: a record written through one name is a hit through the other"
  )
  func oneEnvironmentPerFile() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/two.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/two.png")
    let records = fixture.pipeline.cache.layout.records
    // The same directory through a symbolic link, a spelling the registry has not seen
    let alias = fixture.scratch.path + "/alias"
    #expect(symlink(fixture.scratch.path + "/cache", alias) == 0)
    var configuration = fixture.pipeline.configuration
    configuration.cache.directory = alias
    let other = try AttachmentPipeline(configuration: configuration)

    #expect(try await other.attachment(for: url, timeout: generousTimeout).source == .network)
    #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .cache)
    // This process holds the store's lock file once: one environment (two would each hold it,
    // and closing either would drop the other's POSIX locks)
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    let onLockFile = descriptors.filter {
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == records + "-lock"
    }
    #expect(onLockFile.count == 1, "\(onLockFile.count) descriptors on \(records)-lock")
  }

  @Test(
    "a record store that is not one (garbage over the file) is replaced: its URLs are misses, fetched again")
  func damagedStore() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/d.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/d.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    // Another file put in the store's place (a new inode: what another process would see)
    let records = fixture.pipeline.cache.layout.records
    try writeTestFile(Data(repeating: 0x5A, count: 12_288), to: records + ".garbage")
    #expect(rename(records + ".garbage", records) == 0)

    let reopened = try AttachmentPipeline(configuration: fixture.pipeline.configuration)
    #expect(try await reopened.attachment(for: url, timeout: generousTimeout).source == .network)
    #expect(try await reopened.attachment(for: url, timeout: generousTimeout).source == .cache)
    #expect(try reopened.cache.verify().corrupt == 0)
    #expect(fixture.server.requestCount(path: "/d.png") == 2)
  }

  @Test(
    "a fan-out directory removed and made again under a cache that holds it open: hits use the new one, and see it made unsafe"
  )
  func replacedFanOutDirectory() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/r.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/r.png")
    let key = try #require(URLKey(url))
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let cache = fixture.pipeline.cache
    #expect(cache.entry(for: key) != nil)  // the directory looked at by its path,
    #expect(cache.entry(for: key) != nil)  // then opened and held
    let content = try #require(cache.contentPath(forURL: url))
    let shard = String(content[..<(content.lastIndex(of: "/") ?? content.endIndex)])

    // When the directory is removed and made again, and the URL fetched into it again
    try FileManager.default.removeItem(atPath: shard)
    #expect(mkdir(shard, 0o700) == 0)
    #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .network)

    // Then hits look into the new directory, and see it when it becomes world-writable
    #expect(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout).source == .cache)
    #expect(chmod(shard, 0o777) == 0)
    #expect(cache.entry(for: key) == nil, "a world-writable directory made after the first was trusted")
    #expect(chmod(shard, 0o700) == 0)
    #expect(cache.entry(for: key) != nil)
  }

  @Test("content that is a symbolic link is never served and verify removes it")
  func linkedContent() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let png = try Samples.bytes("png-gray.png")
    fixture.server.serve("/c.png", body: png, contentType: "image/png")
    let url = fixture.server.url("/c.png")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let elsewhere = fixture.scratch.path + "/elsewhere.png"
    #expect(rename(first.path, elsewhere) == 0)
    #expect(symlink(elsewhere, first.path) == 0)

    #expect(fixture.pipeline.cache.entry(for: try #require(URLKey(url))) == nil)
    let report = try fixture.pipeline.cache.verify()
    #expect(report.corrupt >= 1)
    var info = stat()
    #expect(lstat(first.path, &info) != 0)
    #expect(FileManager.default.fileExists(atPath: elsewhere))
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(again.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(png))
  }

  @Test(
    "fan-out directories are checked like the root: an unsafe one is ignored on a hit and rebuilt by verify")
  func unsafeSubdirectories() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/s.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = fixture.server.url("/s.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let content = try #require(fixture.pipeline.cache.contentPath(forURL: url))
    let shard = String(content[..<(content.lastIndex(of: "/") ?? content.endIndex)])
    #expect(chmod(shard, 0o777) == 0)

    #expect(
      fixture.pipeline.cache.entry(for: try #require(URLKey(url))) == nil,
      "a world-writable directory was trusted")
    let report = try fixture.pipeline.cache.verify()
    #expect(report.corrupt >= 1)
    var info = stat()
    #expect(lstat(shard, &info) == 0 && info.st_mode & 0o777 == 0o700)
    #expect(!FileManager.default.fileExists(atPath: content))

    // A world-writable `tmp` makes the first miss refuse to write into it (a hit never looks)
    let temporary = fixture.pipeline.cache.layout.temporary
    #expect(chmod(temporary, 0o777) == 0)
    let opened = try AttachmentCache(configuration: fixture.pipeline.configuration.cache)
    do {
      _ = try opened.makeBodyFile()
      Issue.record("expected io_error")
    } catch {
      #expect(error.code == .ioError)
      #expect(error.message.contains("writable by everyone"))
    }
    // And a world-writable versioned root makes the cache refuse to open
    #expect(chmod(temporary, 0o700) == 0)
    #expect(chmod(fixture.pipeline.cache.layout.versioned, 0o777) == 0)
    defer { chmod(fixture.pipeline.cache.layout.versioned, 0o700) }
    do {
      _ = try AttachmentCache(configuration: fixture.pipeline.configuration.cache)
      Issue.record("expected io_error")
    } catch {
      #expect(error.code == .ioError)
      #expect(error.message.contains("writable by everyone"))
    }
  }
}

/// Where the built `attachkit` binary is (next to the test bundle).
enum CLIPath {
  static var attachkit: String {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
    return directory.path + "/attachkit"
  }
}
