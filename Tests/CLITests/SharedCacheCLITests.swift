import Foundation
import TestSupport
import TestTraits
import Testing

/// One cache directory shared by command-line runs with different options: each run's own
/// limits judge every hit, and the cache size limit applies to fetch and prefetch.
@Suite("attachkit: a shared cache", .serialized, .threadOfItsOwn)
struct SharedCacheCLITests {
  @Test("fetch --max-video-seconds 600, then fetch with the defaults: too_long from the cache, no request")
  func policyAcrossProcesses() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/v.mp4", body: try Media.bytes("too-long-video-40s.mp4"), contentType: "video/mp4")
    let cache = ["--cache-dir", scratch.path + "/cache"]
    let url = server.url("/v.mp4")

    let lenient = try await CLI.run(["fetch", "--json", "--max-video-seconds", "600"] + cache + [url])
    #expect(lenient.status == 0)
    #expect(lenient.jsonLines.first?["outcome"] as? String == "accepted")
    #expect(lenient.jsonLines.first?["source"] as? String == "network")

    let strict = try await CLI.run(["fetch", "--json"] + cache + [url])
    #expect(strict.status == 1)
    let line = try #require(strict.jsonLines.first)
    #expect(line["outcome"] as? String == "rejected")
    #expect((line["error"] as? [String: Any])?["code"] as? String == "too_long")

    // Without --allow-private-networks (and without the variable) the loopback copy is refused
    let publicOnly = try await CLI.run(
      ["fetch", "--json", "--max-video-seconds", "600"] + cache + [url],
      environment: ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"])
    #expect(publicOnly.status == 4)
    #expect((publicOnly.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "blocked_address")
    #expect(server.requestCount(path: "/v.mp4") == 1, "a refused hit must not ask the server")

    // And the lenient caller still gets its hit
    let again = try await CLI.run(["fetch", "--json", "--max-video-seconds", "600"] + cache + [url])
    #expect(again.jsonLines.first?["source"] as? String == "cache")
  }

  @Test("prefetch --max-cache-bytes and ATTACHKIT_CACHE_MAX_BYTES leave the cache at or under its limit")
  func sizeLimit() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let wav = try Media.bytes("wav-pcm16.wav")
    var urls: [String] = []
    for index in 0..<24 {
      var body = wav
      body[body.count - 1] = UInt8(index)
      server.serve("/s/\(index).wav", body: body, contentType: "audio/wav")
      urls.append(server.url("/s/\(index).wav"))
    }
    let list = scratch.path + "/urls.txt"
    try writeTestFile(urls.joined(separator: "\n"), to: list)
    let limit = wav.count * 6

    for (index, setting) in [
      (["--max-cache-bytes", "\(limit)"], [String: String]()),
      ([], ["ATTACHKIT_CACHE_MAX_BYTES": "\(limit)"]),
    ].enumerated() {
      let cache = ["--cache-dir", scratch.path + "/cache\(index)"]
      let run = try await CLI.run(
        ["prefetch", "--json", "-j", "2"] + setting.0 + cache + [list], environment: setting.1)
      #expect(run.status == 0)
      #expect(run.jsonLines.count == urls.count)
      let stats = try #require(try await CLI.run(["cache", "stats", "--json"] + cache).jsonLines.first)
      let bytes = try #require(stats["bytes"] as? Int)
      // A publish that takes the size ledger over the limit sweeps inline, and the sweeper
      // repeats while publishes of the other worker took it over again: a run ends within it.
      #expect(bytes <= limit, "\(setting): \(bytes) bytes for a limit of \(limit)")
      #expect(bytes >= wav.count)
    }

    let unlimited = try await CLI.run(["prefetch", "--json", "--cache-dir", scratch.path + "/cache2", list])
    #expect(unlimited.status == 0)
    let stats = try #require(
      try await CLI.run(["cache", "stats", "--json", "--cache-dir", scratch.path + "/cache2"]).jsonLines.first
    )
    #expect(
      stats["bytes"] as? Int == wav.count * urls.count, "the default limit (512 MiB) evicts nothing here")

    let bad = try await CLI.run(
      ["prefetch", "--cache-dir", scratch.path + "/cache3", list],
      environment: ["ATTACHKIT_CACHE_MAX_BYTES": "lots"])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("ATTACHKIT_CACHE_MAX_BYTES"))
  }

  @Test("cache gc --help lists only the exit codes gc can return")
  func gcExitCodes() async throws {
    let help = try await CLI.run(["cache", "gc", "--help"])
    #expect(help.status == 0)
    let section = try #require(help.stdout.components(separatedBy: "EXIT CODES:").last)
    let codes = section.split(separator: "\n").compactMap {
      $0.split(separator: " ").first.flatMap { Int($0) }
    }
    #expect(codes == [0, 2, 3])
    #expect(try await CLI.run(["fetch", "--help"]).stdout.contains("--max-cache-bytes"))
    #expect(try await CLI.run(["prefetch", "--help"]).stdout.contains("--max-cache-bytes"))
  }
}
