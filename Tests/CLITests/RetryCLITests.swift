import Foundation
import TestSupport
import TestTraits
import Testing

/// `--retries` and `ATTACHKIT_RETRIES` end to end through the built binary: a `503` then `200`
/// is accepted in two attempts by default, and fails as before with retrying off.
@Suite("attachkit retries", .serialized, .threadOfItsOwn)
struct RetryCLITests {
  private static func timings(_ result: CLI.Result) -> [String: Any]? {
    result.jsonLines.first?["timings"] as? [String: Any]
  }

  private static func code(_ result: CLI.Result) -> String? {
    (result.jsonLines.first?["error"] as? [String: Any])?["code"] as? String
  }

  @Test("fetch: a 503 then 200 is accepted in 2 attempts; --retries 0 and ATTACHKIT_RETRIES=0 fail it")
  func retriesOption() async throws {
    // Given three routes that each answer 503 once, then a JPEG
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    for path in ["/default.jpg", "/off.jpg", "/env-off.jpg"] {
      server.serveAfterFailures(path, failures: [(503, nil)], body: jpeg, contentType: "image/jpeg")
    }

    // When each is fetched: by default, with --retries 0, with ATTACHKIT_RETRIES=0
    let retried = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/a", server.url("/default.jpg")])
    let off = try await CLI.run(
      ["fetch", "--json", "--retries", "0", "--cache-dir", scratch.path + "/b", server.url("/off.jpg")])
    let envOff = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", server.url("/env-off.jpg")],
      environment: ["ATTACHKIT_RETRIES": "0"])
    let bad = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/d", server.url("/default.jpg")],
      environment: ["ATTACHKIT_RETRIES": "lots"])

    // Then the default retries once and is accepted; retrying off gives today's http_status
    #expect(retried.status == 0, "\(retried.stderr)")
    #expect(retried.jsonLines.first?["outcome"] as? String == "accepted")
    #expect(Self.timings(retried)?["attempts"] as? Int == 2)
    #expect(Self.timings(retried)?["resumedBytes"] as? Int == 0)
    #expect(server.requestCount(path: "/default.jpg") == 2)
    for (result, path) in [(off, "/off.jpg"), (envOff, "/env-off.jpg")] {
      #expect(result.status == 4)
      #expect(Self.code(result) == "http_status")
      #expect(server.requestCount(path: path) == 1)
    }
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("ATTACHKIT_RETRIES"))
  }
}
