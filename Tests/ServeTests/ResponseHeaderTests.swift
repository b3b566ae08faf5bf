import Foundation
import TestSupport
import TestTraits
import Testing

/// serve's content-safety headers and the operator's own (issue #37, item 7): on every answer.
@Suite("serve: response headers", .threadOfItsOwn)
struct ResponseHeaderTests {
  static let nosniff = "nosniff"
  static let policy = "default-src 'none'; sandbox"

  @Test("nosniff and a sandboxing Content-Security-Policy on a file, a 304, an error, health and metrics")
  func contentSafetyOnEveryAnswer() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/h.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signed = serve.url(try await serve.signed(origin.url("/h.gif"), keyFile: workspace.keyFile))
    let file = try await Curl.get(signed)
    #expect(file.status == 200)
    let etag = try #require(file.header("ETag"))
    let answers = [
      ("file", file),
      ("304", try await Curl.get(signed, ["-H", "If-None-Match: \(etag)"])),
      ("error", try await Curl.get(serve.url("/v1/a/00/aGVsbG8"))),
      ("healthz", try await Curl.get(serve.url("/healthz"))),
      ("metrics", try await Curl.get(serve.url("/metrics"))),
      ("not found", try await Curl.get(serve.url("/nothing"))),
    ]
    #expect(answers[1].1.status == 304)
    #expect(answers[2].1.status == 403)
    for (name, answer) in answers {
      #expect(answer.header("X-Content-Type-Options") == Self.nosniff, "\(name)")
      #expect(answer.header("Content-Security-Policy") == Self.policy, "\(name)")
    }
  }

  @Test("--header adds a field and may replace a default; a reserved or malformed one is a usage error")
  func operatorHeaders() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace,
      [
        "--header", "X-Frame-Options: DENY", "--header", "Content-Security-Policy: default-src 'none'",
      ])
    defer { serve.stop() }
    let answer = try await Curl.get(serve.url("/healthz"))
    #expect(answer.header("X-Frame-Options") == "DENY")
    #expect(answer.header("Content-Security-Policy") == "default-src 'none'")
    #expect(answer.header("X-Content-Type-Options") == Self.nosniff)

    for bad in ["Content-Type: text/html", "no colon", "Bad Name: x", "X-A: one\u{1}two"] {
      let run = try await Run.process(
        Binaries.attachkit,
        ["serve", "--key-file", workspace.keyFile, "--listen", "127.0.0.1:0", "--header", bad])
      #expect(run.status == 2, "\(bad)")
      #expect(run.stderr.contains("--header"), "\(bad)")
    }
  }
}
