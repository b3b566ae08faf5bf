import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit fetch --fallback URL`: the fallback delivered in place of a failed or refused
/// input, within what is left of its deadline, marked in the record.
@Suite("attachkit fetch --fallback", .serialized, .threadOfItsOwn)
struct FetchFallbackTests {
  @Test("a failed and a refused input: the fallback is delivered, accepted, with the input's own error")
  func delivered() async throws {
    // Given an origin with a fallback PNG, a missing file, a WebP under a .jpg name and a good GIF
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/fallback.png", body: try Media.bytes("png-rgba.png"), contentType: "image/png")
    server.serve("/web.jpg", body: try Media.bytes("webp-lossy.webp"), contentType: "image/jpeg")
    server.serve("/ok.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let common = [
      "fetch", "--json", "--cache-dir", scratch.path + "/cache", "--fallback", server.url("/fallback.png"),
    ]

    // When each is fetched with --fallback
    let failed = try await CLI.run(common + [server.url("/status/404")])
    let refused = try await CLI.run(common + [server.url("/web.jpg")])
    let accepted = try await CLI.run(common + [server.url("/ok.gif")])

    // Then a failed or refused input gets the fallback's file, accepted (exit 0), its record
    // naming the input, the fallback and the input's own error
    for (run, path, code) in [
      (failed, "/status/404", "http_status"), (refused, "/web.jpg", "unsupported_type"),
    ] {
      #expect(run.status == 0, "\(path): \(run.stderr)")
      let line = try #require(run.jsonLines.first, "\(path): \(run.stdout)")
      #expect(line["input"] as? String == server.url(path))
      #expect(line["outcome"] as? String == "accepted")
      #expect(line["fallback"] as? Bool == true)
      #expect(line["fallbackURL"] as? String == server.url("/fallback.png"))
      #expect(line["type"] as? String == "png")
      #expect(line["error"] == nil)
      let original = try #require(line["originalError"] as? [String: Any])
      #expect(original["code"] as? String == code)
      let file = try #require(line["path"] as? String)
      #expect(Array(try Data(contentsOf: URL(fileURLWithPath: file))) == (try Media.bytes("png-rgba.png")))
      #expect(
        run.stderr.contains("1 accepted, 0 rejected, 0 failed (1 accepted by fallback)"), "\(run.stderr)")
    }
    // An accepted input is itself: the fallback is not asked for on its account
    #expect(accepted.status == 0)
    let line = try #require(accepted.jsonLines.first)
    #expect(line["fallback"] == nil)
    #expect(line["type"] as? String == "gif")
    // (the fallback was fetched once, then answered from the cache)
    #expect(server.requestCount(path: "/fallback.png") == 1)
  }

  @Test("a fallback that fails too leaves the input's own failure (exit 4); the table names a fallback")
  func fallbackFails() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/fallback.png", body: try Media.bytes("png-rgba.png"), contentType: "image/png")
    let cache = ["--cache-dir", scratch.path + "/cache"]

    let both = try await CLI.run(
      ["fetch", "--json"] + cache + ["--fallback", server.url("/status/500"), server.url("/status/404")])
    #expect(both.status == 4)
    let line = try #require(both.jsonLines.first)
    #expect(line["outcome"] as? String == "failed")
    #expect(line["fallback"] == nil)
    #expect((line["error"] as? [String: Any])?["httpStatus"] as? Int == 404)
    #expect(server.requestCount(path: "/status/500") >= 1)

    let table = try await CLI.run(
      ["fetch"] + cache + ["--fallback", server.url("/fallback.png"), server.url("/status/404")])
    #expect(table.status == 0)
    #expect(table.stdout.contains("accepted"))
    #expect(
      table.stdout.contains("↳ fallback \(server.url("/fallback.png")) in place of http_status"),
      "\(table.stdout)")

    let unusable = try await CLI.run(
      ["fetch"] + cache + ["--fallback", "not a url", server.url("/status/404")])
    #expect(unusable.status == 2)
    #expect(unusable.stderr.contains("--fallback"), "\(unusable.stderr)")
  }

  @Test(
    "the deadline covers input and fallback: an input that hangs to its deadline gets no fallback, never later"
  )
  func withinTheDeadline() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/fallback.png", body: try Media.bytes("png-rgba.png"), contentType: "image/png")

    let started = ContinuousClock.now
    let run = try await CLI.run(
      [
        "fetch", "--json", "--cache-dir", scratch.path + "/cache", "--deadline", "2", "--fallback",
        server.url("/fallback.png"), server.url("/fault/never"),
      ])
    let elapsed = ContinuousClock.now - started

    #expect(run.status == 4)
    let line = try #require(run.jsonLines.first)
    #expect((line["error"] as? [String: Any])?["code"] as? String == "deadline_exceeded")
    #expect(line["fallback"] == nil)
    #expect(server.requestCount(path: "/fallback.png") == 0)
    #expect(elapsed < .seconds(2) + deadlineMargin, "took \(elapsed)")
  }
}
