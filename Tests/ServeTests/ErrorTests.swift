import AttachmentServer
import Foundation
import TestSupport
import TestTraits
import Testing

/// Refusals and failures: each a JSON error with a stable code and its status, nothing cached.
@Suite("attachkit serve errors", .serialized, .threadOfItsOwn)
struct ErrorTests {
  @Test("bad signatures are 403 bad_signature; rotated keys verify; malformed paths are 400; others 404/405")
  func signaturesAndPaths() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    // The server verifies with B (new, signs) and A (old); C was retired.
    let serverKeys = workspace.path + "/server-keys"
    try workspace.writeKeys([Workspace.keyB, Workspace.keyA], to: serverKeys)
    let serve = try await ServeProcess(workspace: workspace, ["--key-file", serverKeys])
    defer { serve.stop() }
    let target = origin.url("/a.gif")
    let keysB = workspace.path + "/b"
    let keysC = workspace.path + "/c"
    try workspace.writeKeys([Workspace.keyB], to: keysB)
    try workspace.writeKeys([Workspace.keyC], to: keysC)

    let withOld = try await serve.signed(target, keyFile: workspace.keyFile)
    let withNew = try await serve.signed(target, keyFile: keysB)
    #expect(try await Curl.get(serve.url(withOld)).status == 200)
    #expect(try await Curl.get(serve.url(withNew)).status == 200)
    let retired = try await Curl.get(serve.url(try await serve.signed(target, keyFile: keysC)))
    #expect(retired.status == 403)
    #expect(retired.errorCode == "bad_signature")
    #expect(retired.header("Content-Type") == "application/json")
    #expect(retired.header("Cache-Control") == "no-store")

    // Another URL under a valid signature, a flipped digit, a truncated signature.
    let parts = withNew.split(separator: "/").map(String.init)  // v1, a, sig, enc
    let otherURL = Data((origin.url("/a.gif") + "?x").utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
    var flipped = Array(parts[2])
    flipped[0] = flipped[0] == "a" ? "b" : "a"
    for path in [
      "/v1/a/\(parts[2])/\(otherURL)", "/v1/a/\(String(flipped))/\(parts[3])",
      "/v1/a/\(parts[2].dropLast())/\(parts[3])",
      "/v1/info/\(String(flipped))/\(parts[3])", "/v1/u/\(parts[3])",
    ] {
      let answer = try await Curl.get(serve.url(path))
      #expect(answer.status == 403, "\(path)")
      #expect(answer.errorCode == "bad_signature", "\(path)")
    }
    for path in [
      "/v1/a/\(parts[2])/not*base64", "/v1/a/\(parts[2])/\(parts[3])=", "/v1/a/\(parts[2])", "/v1/x/y/z",
    ] {
      let answer = try await Curl.get(serve.url(path))
      #expect(answer.status == 400, "\(path)")
      #expect(answer.errorCode == "bad_request", "\(path)")
    }
    // A signed URL that is not http(s): the library's own code, 400. (`attachkit sign` refuses
    // to sign it, so the signer signs it here.)
    let ftpPath = try URLSigner(keyFile: keysB).path(for: "ftp://127.0.0.1/a.gif")
    let ftp = try await Curl.get(serve.url(ftpPath))
    #expect(ftp.status == 400)
    #expect(ftp.errorCode == "unsupported_scheme")
    #expect(try await Curl.get(serve.url("/nothing")).errorCode == "not_found")
    let post = try await Curl.get(serve.url(withNew), ["-X", "POST", "-d", "x=1"])
    #expect(post.status == 405)
    #expect(post.header("Allow") == "GET, HEAD")
    #expect(origin.requestCount(path: "/a.gif") == 1)
  }

  @Test(
    "the whole MAC is compared: its first, a middle and its last byte changed, or its last bit, are 403 each"
  )
  func everyMACByteCounts() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let parts = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile)
      .split(separator: "/").map(String.init)  // v1, a, sig, enc
    try #require(parts.count == 4 && parts[2].count == 64)

    // A comparison of fewer than all 32 bytes (or of the first hex digits only) lets one through.
    for (byte, mask) in SignatureTampering.cases {
      let tampered = try #require(SignatureTampering.flip(parts[2], byte: byte, mask: mask))
      let answer = try await Curl.get(serve.url("/v1/a/\(tampered)/\(parts[3])"))
      #expect(answer.status == 403, "byte \(byte) ^ \(mask)")
      #expect(answer.errorCode == "bad_signature", "byte \(byte) ^ \(mask)")
    }
    // And the untouched signature is served, so the 403s were the signature's.
    #expect(try await Curl.get(serve.url("/v1/a/\(parts[2])/\(parts[3])")).status == 200)
    #expect(origin.requestCount(path: "/a.gif") == 1)
  }

  @Test("422 for refused files, 502 for upstream failures, 504 at X-Deadline-Ms; nothing is cached")
  func refusalsAndFailures() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/page.jpg", body: try Media.bytes("html-error-page.html"), contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    func get(_ path: String, _ options: [String] = []) async throws -> CurlAnswer {
      try await Curl.get(
        serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile)), options)
    }

    let html = try await get("/page.jpg")
    #expect(html.status == 422)
    #expect(html.errorCode == "unsupported_type")
    #expect((html.json?["error"] as? [String: Any])?["detected"] as? String == "text/html")
    // Credentials in the URL never reach the log (this request fails; the success path is
    // checked in unsignedRoute).
    let withSecret = origin.url("/status/404").replacingOccurrences(
      of: "http://", with: "http://user:s3cret@")
    #expect(
      try await Curl.get(serve.url(try await serve.signed(withSecret, keyFile: workspace.keyFile))).status
        == 502)
    let missing = try await get("/status/404")
    #expect(missing.status == 502)
    #expect(missing.errorCode == "http_status")
    let cut = try await get("/fault/short-body")
    #expect(cut.status == 502)
    #expect(cut.errorCode == "truncated")
    let closed = try await Curl.get(
      serve.url(try await serve.signed("http://127.0.0.1:1/a.jpg", keyFile: workspace.keyFile)))
    #expect(closed.status == 502)
    #expect(closed.errorCode == "connect_failed")

    let start = Date()
    let late = try await get("/fault/never", ["-H", "X-Deadline-Ms: 300"])
    let elapsed = Date().timeIntervalSince(start)
    #expect(late.status == 504)
    #expect(late.errorCode == "deadline_exceeded")
    #expect(elapsed < 0.3 + deadlineMarginSeconds)  // not serve's own 25 s deadline
    #expect(try await get("/fault/never", ["-H", "X-Deadline-Ms: soon"]).errorCode == "bad_request")

    // The info route answers a failure with the record and the failure's status.
    let info = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/page.jpg"), keyFile: workspace.keyFile, route: "info")))
    #expect(info.status == 422)
    #expect(info.json?["outcome"] as? String == "rejected")
    #expect((info.json?["error"] as? [String: Any])?["code"] as? String == "unsupported_type")

    await serve.terminate()
    #expect(serve.log.contains("http://***@127.0.0.1"))
    #expect(!serve.log.contains("s3cret"))
    #expect(workspace.cacheFiles().filter { $0.contains("content/") }.isEmpty)
    #expect(workspace.cacheFiles().filter { $0.contains("tmp/") }.isEmpty)
  }

  @Test("the private-network guard is on by default: a loopback origin is 403 blocked_address")
  func privateNetworkGuard() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.png", body: try Media.bytes("png-gray.png"), contentType: "image/png")
    let serve = try await ServeProcess(workspace: workspace, allowPrivate: false)
    defer { serve.stop() }
    let answer = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/a.png"), keyFile: workspace.keyFile)))
    #expect(answer.status == 403)
    #expect(answer.errorCode == "blocked_address")
    #expect(origin.requestCount(path: "/a.png") == 0)
  }

  @Test("--unsigned accepts /v1/u/<base64url(url)> and warns at start")
  func unsignedRoute() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let png = try Media.bytes("png-gray.png")
    origin.serve("/a.png", body: png, contentType: "image/png")
    let serve = try await ServeProcess(workspace: workspace, ["--unsigned"])
    defer { serve.stop() }
    #expect(serve.events.contains { $0["event"] as? String == "warning" })
    let encoded = try await serve.signed(origin.url("/a.png"), keyFile: workspace.keyFile).split(
      separator: "/")[3]
    let answer = try await Curl.get(serve.url("/v1/u/\(encoded)"))
    #expect(answer.status == 200)
    #expect(Array(answer.body) == png)
    let withSecret = origin.url("/a.png").replacingOccurrences(of: "http://", with: "http://user:s3cret@")
    let secretPath = try await serve.signed(withSecret, keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(secretPath)).status == 200)
    #expect(try await Curl.get(serve.url(secretPath)).status == 200)  // a hit
    await serve.terminate()
    #expect(serve.events.filter { $0["status"] as? Int == 200 }.count == 3)
    #expect(!serve.log.contains("s3cret"))
  }
}

/// `serve --rescue`: a near-miss becomes the file the devices download, and says so.
@Suite("serve --rescue", .threadOfItsOwn)
struct ServeRescueTests {
  @Test(
    "with --rescue a WebP is answered as JPEG with X-Attachment-Rescued; without it, 422 unsupported_type")
  func rescuedWebP() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/photo.webp", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp")
    for rescue in [false, true] {
      let workspace = try Workspace()
      defer { workspace.remove() }
      let serve = try await ServeProcess(workspace: workspace, rescue ? ["--rescue"] : [])
      defer { serve.stop() }
      let answer = try await Curl.get(
        serve.url(try await serve.signed(origin.url("/photo.webp"), keyFile: workspace.keyFile)))
      if rescue {
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "image/jpeg")
        #expect(answer.header("X-Attachment-Rescued") == "image/webp")
        #expect(answer.body.prefix(3) == Data([0xFF, 0xD8, 0xFF]))
      } else {
        #expect(answer.status == 422)
        #expect(answer.errorCode == "unsupported_type")
        #expect(answer.header("X-Attachment-Rescued") == nil)
      }
    }
  }

  @Test(
    "with --rescue a WebM is answered as MP4 with X-Attachment-Rescued, and a device can play it (ISO brand, H.264)"
  )
  func rescuedWebM() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/clip.webm", body: try Media.bytes("webm-vp9.webm"), contentType: "video/webm")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue"])
    defer { serve.stop() }
    let answer = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/clip.webm"), keyFile: workspace.keyFile)))
    #expect(answer.status == 200)
    #expect(answer.header("Content-Type") == "video/mp4")
    #expect(answer.header("X-Attachment-Rescued") == "video/webm")
    #expect(answer.body.dropFirst(4).prefix(4) == Data("ftyp".utf8))
    #expect(answer.body.range(of: Data("avc1".utf8)) != nil)
  }
}
