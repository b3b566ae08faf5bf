import Foundation
import TestSupport
import TestTraits
import Testing

/// How one command-line run is shaped: every option is judged before the first answer, and the
/// summary's wall time covers the whole run.
@Suite("attachkit runs", .serialized, .threadOfItsOwn)
struct RunShapeTests {
  @Test(
    "a bad option is a usage error (exit 2) on a cache hit exactly as on a miss",
    arguments: [
      ["--deadline", "abc"], ["--deadline", "-1"], ["--max-video-seconds", "0"],
      ["--max-image-bytes", "lots"],
      ["--proxy-unchecked"], ["--rescue", "--rescue-workers", "0"], ["--rescue-workers", "2"],
      ["--rescue-memory", "1GiB"],
    ])
  func optionsJudgedBeforeAnswering(bad: [String]) async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    let cache = ["--cache-dir", scratch.path + "/c"]
    let url = server.url("/a.png")
    let miss = try await CLI.run(["fetch"] + bad + cache + [url])
    #expect(miss.status == 2, "miss: \(miss.stderr)")
    #expect(server.requestCount(path: "/a.png") == 0)

    #expect(try await CLI.run(["fetch"] + cache + [url]).status == 0)  // now it is cached
    let hit = try await CLI.run(["fetch"] + bad + cache + [url])
    #expect(hit.status == 2, "hit: \(hit.stdout) \(hit.stderr)")
    #expect(hit.stdout.isEmpty)
  }

  @Test("the summary's wall time is never below its p50 or p99, on a hit and on a miss")
  func wallCoversTheRun() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.png", body: try Media.bytes("png-rgba.png"))
    server.serve("/b.gif", body: try Media.bytes("gif-static.gif"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    let arguments = ["fetch", "--cache-dir", scratch.path + "/c", server.url("/a.png"), server.url("/b.gif")]
    for pass in ["miss", "hit"] {
      let result = try await CLI.run(arguments)
      #expect(result.status == 0)
      let summary = try #require(result.stdout.split(separator: "\n").last.map(String.init))
      let wall = try #require(Self.microseconds(after: "wall ", in: summary), "\(pass): \(summary)")
      let p50 = try #require(Self.microseconds(after: "p50 ", in: summary), "\(pass): \(summary)")
      let p99 = try #require(Self.microseconds(after: "p99 ", in: summary), "\(pass): \(summary)")
      #expect(wall >= p50 && wall >= p99, "\(pass): \(summary)")
      #expect(summary.contains(pass == "hit" ? "2 cache hits" : "0 cache hits"), "\(pass): \(summary)")
    }
  }

  /// The duration printed after `label` ("866 µs", "1.2 ms", "3 s") in microseconds.
  private static func microseconds(after label: String, in text: String) -> Double? {
    guard let range = text.range(of: label) else { return nil }
    let words = text[range.upperBound...].split(separator: " ")
    guard words.count >= 2, let value = Double(words[0]) else { return nil }
    switch words[1] {
    case "µs": return value
    case "ms": return value * 1000
    case "s": return value * 1_000_000
    default: return nil
    }
  }
}
