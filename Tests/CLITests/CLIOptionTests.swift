import Foundation
import TestSupport
import TestTraits
import Testing

/// The command line's own options, end to end through the built binary: each changes the
/// answer it promises to, and only that.
@Suite("attachkit options", .serialized, .threadOfItsOwn)
struct CLIOptionTests {
  /// A server with one sample per category, and a fresh cache directory per call.
  private final class Fixture {
    let server: TestHTTPServer
    let scratch: Scratch
    private var caches = 0

    init() throws {
      server = try TestHTTPServer.start()
      scratch = try Scratch()
      for name in [
        "jpeg-exif.jpg", "mp3-no-tag.mp3", "wav-pcm16.wav", "mp4-isom.mp4", "too-long-video-40s.mp4",
      ] {
        server.serve("/\(name)", body: try Media.bytes(name))
      }
      server.serve(
        "/page.jpg", body: Array("<html><body>login</body></html>".utf8), contentType: "image/jpeg")
    }

    func freshCache() -> [String] {
      caches += 1
      return ["--cache-dir", scratch.path + "/cache\(caches)"]
    }

    func stop() {
      server.stop()
      scratch.remove()
    }
  }

  private static func code(_ result: CLI.Result) -> String? {
    (result.jsonLines.first?["error"] as? [String: Any])?["code"] as? String
  }

  @Test(
    "--max-image-bytes, --max-audio-bytes, --max-video-bytes: one byte under the file refuses it, its size accepts it",
    arguments: [
      ("--max-image-bytes", "jpeg-exif.jpg", 825), ("--max-audio-bytes", "mp3-no-tag.mp3", 4180),
      ("--max-video-bytes", "mp4-isom.mp4", 6231),
    ])
  func sizeLimits(option: String, name: String, bytes: Int) async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let url = fixture.server.url("/\(name)")
    let under = try await CLI.run(
      ["fetch", "--json", option, String(bytes - 1)] + fixture.freshCache() + [url])
    #expect(under.status == 1)
    #expect(Self.code(under) == "too_large", "\(under.stdout)")
    let exact = try await CLI.run(["fetch", "--json", option, String(bytes)] + fixture.freshCache() + [url])
    #expect(exact.status == 0, "\(exact.stdout)")
    #expect(exact.jsonLines.first?["bytes"] as? Int == bytes)
  }

  @Test(
    "--max-video-seconds: 1 refuses a 2 s video as too_long; 600 accepts the 40 s one the default refuses")
  func videoSeconds() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let short = try await CLI.run(
      ["fetch", "--json", "--max-video-seconds", "1"] + fixture.freshCache() + [
        fixture.server.url("/mp4-isom.mp4")
      ])
    #expect(Self.code(short) == "too_long", "\(short.stdout)")
    let long = fixture.server.url("/too-long-video-40s.mp4")
    let byDefault = try await CLI.run(["fetch", "--json"] + fixture.freshCache() + [long])
    #expect(Self.code(byDefault) == "too_long")
    let allowed = try await CLI.run(
      ["fetch", "--json", "--max-video-seconds", "600"] + fixture.freshCache() + [long])
    #expect(allowed.status == 0, "\(allowed.stdout)")
    #expect(allowed.jsonLines.first?["durationSeconds"] as? Double == 40)
  }

  @Test("--no-cache downloads again although the entry is fresh, and still answers from the network")
  func noCache() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let cache = fixture.freshCache()
    let url = fixture.server.url("/wav-pcm16.wav")
    #expect(try await CLI.run(["fetch"] + cache + [url]).status == 0)
    let hit = try await CLI.run(["fetch", "--json"] + cache + [url])
    #expect(hit.jsonLines.first?["source"] as? String == "cache")
    #expect(fixture.server.requestCount(path: "/wav-pcm16.wav") == 1)
    let reload = try await CLI.run(["fetch", "--json", "--no-cache"] + cache + [url])
    #expect(reload.jsonLines.first?["source"] as? String == "network")
    #expect(fixture.server.requestCount(path: "/wav-pcm16.wav") == 2)
  }

  @Test("--quiet: nothing on stdout; one escaped line per refusal or failure on stderr, none per success")
  func quiet() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let urls = [
      fixture.server.url("/jpeg-exif.jpg"), fixture.server.url("/page.jpg"),
      fixture.server.url("/status/500"),
    ]
    let result = try await CLI.run(["fetch", "--quiet"] + fixture.freshCache() + urls)
    #expect(result.status == 4)  // the 500 failed
    #expect(result.stdout.isEmpty)
    let lines = result.stderr.split(separator: "\n").map(String.init)
    #expect(lines.count == 2, "\(lines)")
    #expect(lines.contains { $0.hasPrefix(urls[1] + ": unsupported_type: ") })
    #expect(lines.contains { $0.hasPrefix(urls[2] + ": http_status: ") })
  }

  @Test("--json: stdout is JSON lines only, one per input in order; the summary goes to stderr")
  func pureJSONLines() async throws {
    let fixture = try Fixture()
    defer { fixture.stop() }
    let urls = [
      fixture.server.url("/jpeg-exif.jpg"), fixture.server.url("/page.jpg"),
      fixture.server.url("/status/404"),
      "not a url",
    ]
    let list = urls.joined(separator: "\n") + "\n"
    let result = try await CLI.run(["prefetch", "--json"] + fixture.freshCache() + ["-"], stdin: list)
    #expect(result.status == 2)  // the 404 and the non-URL failed; the non-URL can never work
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == urls.count, "\(result.stdout)")
    for line in lines {
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      #expect(object != nil, "not a JSON object: \(line)")
    }
    #expect(
      result.jsonLines.map { $0["outcome"] as? String } == ["accepted", "rejected", "failed", "failed"])
    #expect(result.stdout.hasSuffix("}\n"))
    #expect(result.stderr.contains("1 accepted, 1 rejected, 2 failed"))
  }
}
