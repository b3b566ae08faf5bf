import Foundation
import TestSupport
import TestTraits
import Testing

/// The cache survives `kill -9` mid-flight and concurrent processes: nothing corrupt and no
/// temporary file after each kill, every URL answered with the true bytes.
@Suite("Crash consistency and concurrent processes", .serialized, .threadOfItsOwn)
struct CrashConsistencyTests {
  /// A server with `count` distinct WAV files (real structure, distinct last sample), some of
  /// them served slowly so kills land mid-download.
  static func serveWAVs(_ server: TestHTTPServer, count: Int, slowEvery: Int = 0) throws -> [String: [UInt8]]
  {
    let wav = try Media.bytes("wav-pcm16.wav")
    var bodies: [String: [UInt8]] = [:]
    for index in 0..<count {
      var body = wav
      body[body.count - 1] = UInt8(index % 256)
      body[body.count - 2] = UInt8(index / 256)
      let path = "/w/\(index).wav"
      bodies[server.url(path)] = body
      if slowEvery > 0, index % slowEvery == 0 {
        let copy = body
        server.route(path) { _, writer in
          writer.writeHead(status: 200, headers: [("Content-Length", "\(copy.count)")])
          for start in stride(from: 0, to: copy.count, by: 4096) {
            guard writer.write(Array(copy[start..<min(copy.count, start + 4096)])) else { return }
            _ = writer.sleep(milliseconds: 15)
          }
        }
      } else {
        server.serve(path, body: body, contentType: "audio/wav")
      }
    }
    return bodies
  }

  static func checkAnswers(_ lines: [[String: Any]], bodies: [String: [UInt8]]) {
    #expect(lines.count == bodies.count)
    for line in lines {
      let input = line["input"] as? String ?? ""
      #expect(line["outcome"] as? String == "accepted", "\(input): \(line["error"] ?? "")")
      guard let path = line["path"] as? String, let expected = bodies[input] else {
        Issue.record("no path or unknown input \(input)")
        continue
      }
      #expect(FileManager.default.contents(atPath: path) == Data(expected), "\(input)")
    }
  }

  /// The body of `/k/ROUND/INDEX.wav`: the sample WAV with its last three bytes made
  /// distinct, so every round publishes new content.
  static func crashBody(_ wav: [UInt8], round: Int, index: Int) -> [UInt8] {
    var body = wav
    body[body.count - 1] = UInt8(index)
    body[body.count - 2] = UInt8(round % 256)
    body[body.count - 3] = 0xA5
    return body
  }

  /// How many content files the cache holds now (a publish links its content, then commits its
  /// record under the same lock hold).
  static func contentCount(_ cache: String) -> Int {
    let content = cache + "/v3/content"
    let shards = (try? FileManager.default.contentsOfDirectory(atPath: content)) ?? []
    return shards.reduce(0) {
      $0 + ((try? FileManager.default.contentsOfDirectory(atPath: content + "/" + $1))?.count ?? 0)
    }
  }

  /// The bytes of every content file under the cache (an oracle for the size ledger).
  static func contentBytes(_ cache: String) -> Int64 {
    let content = cache + "/v3/content"
    let shards = (try? FileManager.default.contentsOfDirectory(atPath: content)) ?? []
    var total: Int64 = 0
    for shard in shards {
      for name in (try? FileManager.default.contentsOfDirectory(atPath: content + "/" + shard)) ?? [] {
        let size = (try? FileManager.default.attributesOfItem(atPath: content + "/" + shard + "/" + name))?[
          .size]
        total += (size as? NSNumber)?.int64Value ?? 0
      }
    }
    return total
  }

  /// The size ledger in the cache's lock file (its first 16 bytes: the count, then the count
  /// XOR "ledger01"), or `nil` when they do not check.
  static func ledger(_ cache: String) -> Int64? {
    guard let data = FileManager.default.contents(atPath: cache + "/v3/lock"), data.count >= 16 else {
      return nil
    }
    let bytes = [UInt8](data.prefix(16))
    func word(_ offset: Int) -> UInt64 {
      (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
    guard word(8) == word(0) ^ 0x6C65_6467_6572_3031 else { return nil }
    return Int64(exactly: word(0))
  }

  @Test(
    "kill -9 at 50 moments chosen by bytes sent or a content file appearing: every kill mid-flight, verify clean after each, true bytes after"
  )
  func killNine() async throws {
    // Given a server whose bodies go out in paced 2 KiB chunks, counting what it has sent
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let wav = try Media.bytes("wav-pcm16.wav")
    let sent = Guarded(0)
    let paced = Guarded(true)
    server.routePrefix("/k/") { request, writer in
      let parts = request.path.split(separator: "/")
      guard parts.count == 3, let round = Int(parts[1]), let index = Int(parts[2].prefix { $0 != "." }) else {
        _ = writer.respond(status: 404)
        return
      }
      let body = Self.crashBody(wav, round: round, index: index)
      _ = writer.writeHead(
        status: 200, headers: [("Content-Length", "\(body.count)"), ("Content-Type", "audio/wav")])
      for start in stride(from: 0, to: body.count, by: 2048) {
        let chunk = Array(body[start..<min(body.count, start + 2048)])
        guard writer.write(chunk) else { return }
        sent.withLock { $0 += chunk.count }
        if paced.withLock({ $0 }) { _ = writer.sleep(milliseconds: 10) }
      }
    }
    let cache = scratch.path + "/cache"
    let filesPerRound = 24
    let roundBytes = filesPerRound * wav.count
    var bodies: [String: [UInt8]] = [:]
    var midFlight = 0
    var published: [Int] = []  // entries each killed run managed to publish
    var entries = 0

    for round in 0..<50 {
      let urls = (0..<filesPerRound).map { server.url("/k/\(round)/\($0).wav") }
      for (index, url) in urls.enumerated() { bodies[url] = Self.crashBody(wav, round: round, index: index) }
      let list = scratch.path + "/round.txt"
      try writeTestFile(urls.joined(separator: "\n"), to: list)
      // Even rounds: kill once the server has sent a share of the round, from the first
      // chunks (connections and body files just made) to the last wave. Odd rounds: kill once
      // the round's first content file exists (its publish under way or done), while the rest
      // of its wave validates and publishes.
      let byRecord = round % 2 == 1
      let target = roundBytes * (round + 1) / 52
      let before = sent.withLock { $0 }
      let process = try CLI.spawn(
        ["prefetch", "--json", "--concurrency", "8", "--cache-dir", cache, list],
        stdout: scratch.path + "/out")
      // Watched, and killed, from a thread of its own: every 0.5 ms, whatever the pool's load.
      let contentBefore = Self.contentCount(cache)
      let (killedMidFlight, progress) = await onOwnThread { [process] () -> (Bool, Int) in
        func reached() -> Bool {
          byRecord ? Self.contentCount(cache) > contentBefore : sent.withLock { $0 } - before >= target
        }
        let bound = ContinuousClock.now + .seconds(10)  // only stops a broken test
        while !reached() && process.isRunning && ContinuousClock.now < bound { usleep(500) }
        let progress = sent.withLock { $0 } - before
        let midFlight = process.isRunning && reached() && progress < roundBytes
        kill(process.processIdentifier, SIGKILL)
        return (midFlight, progress)
      }
      if killedMidFlight {
        midFlight += 1
      } else {
        Issue.record(
          "round \(round): not killed mid-flight (sent \(progress) of \(roundBytes), target \(byRecord ? "a content file" : "\(target) B"))"
        )
      }
      await process.exitStatus()

      // Then verify, before anything could repair it, finds nothing corrupt and leaves no
      // temporary file
      let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
      let report = try #require(verify.jsonLines.first, "round \(round): \(verify.stderr)")
      #expect(report["corrupt"] as? Int == 0, "round \(round): \(report)")
      #expect(report["temporaryFiles"] as? Int == 0, "round \(round): \(report)")
      published.append((report["entries"] as? Int ?? 0) - entries)
      entries = report["entries"] as? Int ?? 0
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache + "/v3/tmp")
      #expect(leftovers.isEmpty, "round \(round): \(leftovers)")
      // And the size ledger, whatever the kill left in it, is recounted to what is on disk
      #expect(Self.ledger(cache) == Self.contentBytes(cache), "round \(round)")
    }
    print("kill -9: \(midFlight) of 50 prefetch runs killed mid-flight")
    #expect(midFlight == 50)
    // Kills landed before any publish of their run, and after some of it
    print("kill -9: entries published per killed run: \(published)")
    #expect(published.contains(0))
    #expect(published.contains { $0 > 0 && $0 < filesPerRound })

    // And every URL of every round is then answered with its true bytes (hits checked too)
    paced.withLock { $0 = false }
    let list = scratch.path + "/all.txt"
    try writeTestFile(bodies.keys.sorted().joined(separator: "\n"), to: list)
    let final = try await CLI.run(["prefetch", "--json", "--concurrency", "16", "--cache-dir", cache, list])
    #expect(final.status == 0)
    Self.checkAnswers(final.jsonLines, bodies: bodies)
  }

  @Test(
    "kill -9 of a writer inside the record store's commit (its pages written, its meta page not; or before its pages): the transaction is not there, every earlier one is, verify clean"
  )
  func killInsideCommit() async throws {
    let strace = "/usr/bin/strace"
    try #require(FileManager.default.isExecutableFile(atPath: strace), "strace is missing")
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bodies = try Self.serveWAVs(server, count: 60)
    let urls = bodies.keys.sorted()
    let cache = scratch.path + "/cache"
    // A cache whose store exists (made, and its naming key committed, by an earlier process)
    let first = try await CLI.run(["fetch", "--json", "--cache-dir", cache, urls[0]])
    #expect(first.status == 0)
    var entries = 1
    var next = 1

    // A commit writes its pages (`writev`, or `pwrite64` for a lone page), then its meta page
    // (`pwrite64` of 120 bytes: the commit point). strace, tracing only calls on the store file,
    // kills the writer (SIGKILL, as the kernel delivers it) on entering the Nth such call, and
    // its log says which call that was and how many commits were complete before it.
    let records = cache + "/v3/records"
    let cases: [(call: String, when: Int)] =
      (1...10).map { ("pwrite64", $0) } + [("writev", 1), ("writev", 2)]
    var insideCommit = (pages: 0, meta: 0, runs: 0)
    for (call, when) in cases {
      let batch = Array(urls[next..<next + 4])
      next += 4
      let list = scratch.path + "/batch.txt"
      try writeTestFile(batch.joined(separator: "\n"), to: list)
      let log = scratch.path + "/strace-\(call)-\(when).log"
      _ = try await CLI.run(
        program: strace,
        [
          "-f", "-qq", "-y", "-P", records, "-o", log, "-e", "trace=writev,pwrite64", "-e",
          "inject=\(call):signal=SIGKILL:when=\(when)", CLI.attachkit, "prefetch", "--json", "--concurrency",
          "1", "--cache-dir", cache, list,
        ])
      // (A run with fewer such calls than N finishes whole: its commits are all there.)
      let lines = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? []
      // The call the kill entered: with several threads traced, strace may print it as
      // "<unfinished ...>" and its end as "<... resumed>) = ?", a line without the file's name.
      let entered = lines.last {
        $0.contains("/v3/records>") && ($0.hasSuffix("= ?") || $0.hasSuffix("<unfinished ...>"))
      }
      let killed =
        lines.contains { $0.contains("killed by SIGKILL") }
        ? (entered ?? lines.last { $0.hasSuffix("= ?") }).map(String.init) ?? "" : ""
      if !killed.isEmpty { insideCommit.runs += 1 }
      let commits = lines.filter {
        $0.contains("/v3/records>") && $0.contains(", 120, ") && $0.hasSuffix("= 120")
      }
      if killed.contains("/v3/records>") {
        if killed.contains(", 120, ") { insideCommit.meta += 1 } else { insideCommit.pages += 1 }
      }

      // Then the store opens, and holds exactly the commits made before the kill
      let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
      let report = try #require(verify.jsonLines.first, "\(call) #\(when): \(verify.stderr)")
      #expect(report["corrupt"] as? Int == 0, "\(call) #\(when): \(report)")
      #expect(report["temporaryFiles"] as? Int == 0, "\(call) #\(when): \(report)")
      #expect(
        report["entries"] as? Int == entries + commits.count,
        "\(call) #\(when): \(report), killed in \(killed)")
      entries = report["entries"] as? Int ?? entries
      #expect(Self.ledger(cache) == Self.contentBytes(cache), "\(call) #\(when)")
    }
    // Kills landed inside commits: between a commit's pages and its meta page, and among its pages
    print(
      "kill -9 inside a commit: \(insideCommit.runs) writers killed, \(insideCommit.meta) at the meta page, \(insideCommit.pages) among the pages"
    )
    #expect(insideCommit.runs >= 8 && insideCommit.meta >= 1 && insideCommit.pages >= 1, "\(insideCommit)")

    // And a later writer commits on top (the killed writer's reader slot and lock are cleared),
    // every URL answered with its true bytes
    let list = scratch.path + "/all.txt"
    try writeTestFile(urls.prefix(next).joined(separator: "\n"), to: list)
    let final = try await CLI.run(["prefetch", "--json", "--concurrency", "4", "--cache-dir", cache, list])
    #expect(final.status == 0)
    Self.checkAnswers(final.jsonLines, bodies: bodies.filter { urls.prefix(next).contains($0.key) })
    let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
    #expect(verify.jsonLines.first?["entries"] as? Int == next)
    #expect(verify.jsonLines.first?["corrupt"] as? Int == 0)
  }

  @Test(
    "two processes publishing and hitting overlapping URLs at once, three rounds (the second re-fetching all): no record lost"
  )
  func concurrentPublishesLoseNothing() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bodies = try Self.serveWAVs(server, count: 150)
    let urls = bodies.keys.sorted()
    // Process A: URLs 0..<100; process B: 50..<150 (50 shared, each publishing its own)
    let lists = [Array(urls[0..<100]), Array(urls[50..<150])]
    for (index, list) in lists.enumerated() {
      try writeTestFile(list.joined(separator: "\n"), to: scratch.path + "/list\(index).txt")
    }
    let cache = scratch.path + "/cache"

    for round in 0..<3 {
      // Round 1 downloads every URL again (`fetch --no-cache`) and republishes it
      let processes = try (0..<2).map { index in
        try CLI.spawn(
          round == 1
            ? ["fetch", "--json", "--no-cache", "--cache-dir", cache] + lists[index]
            : [
              "prefetch", "--json", "--concurrency", "8", "--cache-dir", cache,
              scratch.path + "/list\(index).txt",
            ],
          stdout: scratch.path + "/out\(index)-\(round)")
      }
      for process in processes { await process.exitStatus() }
      for (index, process) in processes.enumerated() {
        #expect(process.terminationStatus == 0, "round \(round), process \(index)")
        let lines = CLI.jsonLines(ofFile: scratch.path + "/out\(index)-\(round)")
        Self.checkAnswers(lines, bodies: bodies.filter { lists[index].contains($0.key) })
        if round == 2 {
          #expect(lines.allSatisfy { $0["source"] as? String == "cache" }, "round 2 must be all hits")
        }
      }
      // Then every URL either process published has its record
      let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
      let report = try #require(verify.jsonLines.first)
      #expect(report["entries"] as? Int == 150, "round \(round): \(report)")
      #expect(report["corrupt"] as? Int == 0, "round \(round): \(report)")
    }
  }

  @Test("4 processes × concurrency 16 over the same 200 URLs and one cache: every result correct")
  func concurrentProcesses() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bodies = try Self.serveWAVs(server, count: 200)
    let list = scratch.path + "/urls.txt"
    try writeTestFile(bodies.keys.sorted().joined(separator: "\n"), to: list)
    let cache = scratch.path + "/cache"

    let processes = try (0..<4).map { index in
      try CLI.spawn(
        ["prefetch", "--json", "--concurrency", "16", "--cache-dir", cache, list],
        stdout: scratch.path + "/out\(index)")
    }
    for process in processes { await process.exitStatus() }

    for (index, process) in processes.enumerated() {
      #expect(process.terminationStatus == 0)
      Self.checkAnswers(CLI.jsonLines(ofFile: scratch.path + "/out\(index)"), bodies: bodies)
    }
    let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
    let report = try #require(verify.jsonLines.first)
    #expect(report["entries"] as? Int == 200)
    #expect(report["corrupt"] as? Int == 0)
    // Identical content is stored once even when four processes raced to publish it
    #expect(report["contentFiles"] as? Int == 200)
  }
}

/// A value behind a lock, shared with the test server's handler threads.
final class Guarded<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
