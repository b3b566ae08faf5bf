import Foundation
import TestSupport
import TestTraits
import Testing

/// serve with `--cache-key-ignore preset:s3` (issue #52, item 1): serve's hit memo and refusal
/// memo are kept per caller's URL, so a forged signature neither gets another caller's file from
/// the memo nor poisons a valid caller with its refusal.
@Suite("serve: presigned URLs are confirmed per caller", .threadOfItsOwn)
struct HitConfirmationServeTests {
  @Test("Alice's file, hit and remembered, is never Mallory's; Mallory's refusal is never Alice's")
  func perCaller() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let secret = try Media.bytes("png-rgba.png")
    origin.route("/s3/secret.png") { request, writer in
      guard request.query?.contains("X-Amz-Signature=alice") == true else {
        _ = writer.respond(
          status: 403, headers: [("Content-Type", "application/xml")], body: Array("<Error/>".utf8))
        return
      }
      if request.header("If-None-Match") == "\"v1\"" {
        _ = writer.respond(status: 304, headers: [("ETag", "\"v1\"")])
        return
      }
      _ = writer.respond(
        status: 200,
        headers: [("Content-Type", "image/png"), ("ETag", "\"v1\""), ("Cache-Control", "max-age=600")],
        body: secret)
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--cache-key-ignore", "preset:s3"])
    defer { serve.stop() }
    let query = "?X-Amz-Date=20991201T000000Z&X-Amz-Expires=60&X-Amz-Signature="
    let alice = serve.url(
      try await serve.signed(origin.url("/s3/secret.png") + query + "alice", keyFile: workspace.keyFile))
    let mallory = serve.url(
      try await serve.signed(origin.url("/s3/secret.png") + query + "forged", keyFile: workspace.keyFile))
    let bare = serve.url(try await serve.signed(origin.url("/s3/secret.png"), keyFile: workspace.keyFile))
    // Alice twice: fetched, then a hit (remembered by serve)
    for _ in 0..<2 {
      let answer = try await Curl.get(alice)
      #expect(answer.status == 200 && answer.body == Data(secret))
    }
    // Mallory, forged and bare, after Alice's hit: refused, the origin asked with his URL
    origin.resetCounters()
    for url in [mallory, bare, mallory] {
      let answer = try await Curl.get(url)
      // The origin's 403 to this caller's URL is this caller's refusal: 403, not a 502 that
      // a CDN reads as the upstream failing.
      #expect(answer.status == 403, "\(answer.status)")
      #expect(answer.errorCode == "http_status")
      #expect(answer.body != Data(secret))
    }
    #expect(origin.requests(path: "/s3/secret.png").allSatisfy { $0.query?.contains("alice") != true })
    #expect(!origin.requests(path: "/s3/secret.png").isEmpty)
    // and Alice is still answered: Mallory's refusal was remembered for Mallory's URL only
    let again = try await Curl.get(alice)
    #expect(again.status == 200 && again.body == Data(secret))
  }
}
