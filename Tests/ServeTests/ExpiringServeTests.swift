import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentServer

/// Expiring and hidden-origin paths against a real `attachkit serve` and a real origin on
/// loopback: served while valid, refused once expired or changed, one spelling each, and the
/// paths signed before them unchanged.
@Suite("attachkit serve: expiring and hidden paths", .serialized, .threadOfItsOwn)
struct ExpiringServeTests {
  /// The status line and body of `target` sent byte for byte (curl would tidy some spellings).
  private func raw(_ target: String, port: Int) async throws -> (status: Int, text: String) {
    let connection = try #require(RawConnection(port: port))
    connection.send("GET \(target) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    let text = await connection.readUntilClosed(idleSeconds: 5).text
    let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
    return (status, text)
  }

  @Test(
    "sign --expires 15m and --encrypt (key file from ATTACHKIT_KEY_FILE) are served 200 with the origin's bytes"
  )
  func validPathsServed() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/a.gif", body: gif, contentType: "image/gif")
    origin.serve("/b.gif", body: gif, contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let before = Int64(Date().timeIntervalSince1970)
    let expiring = try await Run.process(
      Binaries.attachkit, ["sign", "--key-file", workspace.keyFile, "--expires", "15m", origin.url("/a.gif")])
    #expect(expiring.status == 0, "\(expiring.stderr)")
    let path = expiring.text.trimmingCharacters(in: .whitespacesAndNewlines)
    let parts = path.split(separator: "/").map(String.init)  // v1, a, sig, expiry, enc
    try #require(parts.count == 5 && parts[1] == "a")
    let expiry = try #require(Int64(parts[3]))
    #expect(expiry >= before + 900 && expiry <= before + 960)
    let answer = try await Curl.get(serve.url(path))
    #expect(answer.status == 200)
    #expect(Array(answer.body) == gif)
    // Not kept past the expiry: the origin's default hour at most what the path has left.
    let lifetime = answer.header("Cache-Control")?.split(separator: "=").last.flatMap { Int64($0) } ?? -1
    #expect(lifetime > 0 && lifetime <= expiry - before, "\(answer.header("Cache-Control") ?? "")")

    let hidden = try await Run.process(
      Binaries.attachkit, ["sign", "--encrypt", "--expires", "1h", origin.url("/b.gif")],
      environment: ["ATTACHKIT_KEY_FILE": workspace.keyFile])
    #expect(hidden.status == 0, "\(hidden.stderr)")
    let hiddenPath = hidden.text.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(hiddenPath.hasPrefix("/v1/e/"))
    #expect(!hiddenPath.contains(Base64URL.encode(Array("127.0.0.1".utf8)).prefix(8)))
    let opened = try await Curl.get(serve.url(hiddenPath))
    #expect(opened.status == 200)
    #expect(Array(opened.body) == gif)
    #expect(origin.requestCount(path: "/b.gif") == 1)
    // A negative or malformed duration is a usage error.
    for bad in ["-1h", "0s", "1w", "1.5h"] {
      let refused = try await Run.process(
        Binaries.attachkit, ["sign", "--key-file", workspace.keyFile, "--expires", bad, origin.url("/a.gif")])
      #expect(refused.status == 2, "\(bad)")
    }
  }

  @Test(
    "an expired path is 410 signature_expired and a changed hidden path 403 bad_encrypted_url, with no fetch")
  func expiredAndTamperedRefused() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signer = try URLSigner(keyFile: workspace.keyFile)
    // Signed with an expiry already past: the library's API at a past time (no waiting).
    let past = Int64(Date().timeIntervalSince1970) - 60
    for route in [ProxyRoute.attachment, .info, .hidden] {
      let expired = try signer.path(for: origin.url("/a.gif"), route: route, expires: past)
      let answer = try await Curl.get(serve.url(expired))
      #expect(answer.status == 410, "\(route)")
      #expect(answer.errorCode == "signature_expired", "\(route)")
      #expect(answer.header("Cache-Control")?.contains("no-store") == true)
    }
    // A hidden path with one character of its sealed URL changed (a valid base64url spelling).
    let hidden = try signer.path(for: origin.url("/a.gif"), route: .hidden)
    var characters = Array(hidden)
    let middle = hidden.count - 20
    characters[middle] = characters[middle] == "A" ? "B" : "A"
    let tampered = try await Curl.get(serve.url(String(characters)))
    #expect(tampered.status == 403)
    #expect(tampered.errorCode == "bad_encrypted_url")
    // Sealed under another key (one this server never had).
    let foreign = try URLSigner(keyFileText: Workspace.keyC).path(for: origin.url("/a.gif"), route: .hidden)
    #expect(try await Curl.get(serve.url(foreign)).errorCode == "bad_encrypted_url")
    #expect(origin.requestCount(path: "/a.gif") == 0)
    // The untouched one is served.
    #expect(try await Curl.get(serve.url(hidden)).status == 200)
  }

  @Test("an expiring path verified once is refused once it expires (the memo of verified targets)")
  func rememberedTargetExpires() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signer = try URLSigner(keyFile: workspace.keyFile)
    // Eight seconds ahead: asked again and again, each answer judged by when it came (observed,
    // not slept for): one that came before the expiry must be served (the second and later from
    // the memo of verified targets), one asked a second after it (serve's clock is coarse, the
    // expiry whole seconds) refused with 410, and the last is a 410.
    let expires = Int64(Date().timeIntervalSince1970) + 8
    let path = try signer.path(for: origin.url("/a.gif"), expires: expires)
    var served = 0
    var refused = false
    let end = Date().addingTimeInterval(45)
    while !refused, Date() < end {
      let asked = Date().timeIntervalSince1970
      let status = try await Curl.get(serve.url(path)).status
      let answered = Date().timeIntervalSince1970
      if answered < Double(expires) {
        #expect(status == 200, "answered \(Double(expires) - answered) s before the expiry")
        served += 1
      } else if asked >= Double(expires + 1) {
        #expect(status == 410, "asked \(asked - Double(expires)) s after the expiry")
      }
      refused = status == 410
      try await Task.sleep(for: .milliseconds(100))
    }
    #expect(served >= 2, "fewer than two answers came in the 8 s before the expiry")
    #expect(refused, "still served 45 s after it was asked first")
    #expect(origin.requestCount(path: "/a.gif") == 1)
  }

  @Test(
    "one spelling of each new form: leading zeros, padding, a query, %-escapes, case and slashes are refused")
  func oneSpelling() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/ab.gif", body: gif, contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signer = try URLSigner(keyFile: workspace.keyFile)
    let expires = Int64(Date().timeIntervalSince1970) + 3_600
    let url = origin.url("/ab.gif")
    let path = try signer.path(for: url, expires: expires)
    let parts = path.split(separator: "/").map(String.init)  // v1, a, sig, expiry, enc
    let (signature, expiry, encoded) = (parts[2], parts[3], parts[4])
    let hidden = try signer.path(for: url, route: .hidden, expires: expires)
    let sealed = String(hidden.split(separator: "/").last ?? "")
    #expect(try await raw(path, port: serve.port).status == 200)
    #expect(try await raw(hidden, port: serve.port).status == 200)
    let escapedSealed = String(format: "%%%02X", sealed.utf8.first ?? 0) + sealed.dropFirst()
    let variants: [(String, Int)] = [
      ("/v1/a/\(signature)/0\(expiry)/\(encoded)", 400),
      ("/v1/a/\(signature)/00\(expiry)/\(encoded)", 400),
      ("/v1/a/\(signature)/\(expiry)0/\(encoded)", 403),
      ("/v1/a/\(signature)/+\(expiry)/\(encoded)", 400),
      ("/v1/a/\(signature.uppercased())/\(expiry)/\(encoded)", 403),
      ("/v1/a/\(signature)/\(expiry)/\(encoded)=", 400),
      ("/v1/a/\(signature)/\(expiry)/\(encoded)/", 400),
      ("\(path)?", 400),
      ("\(path)?utm=1", 400),
      ("/v1/a/\(signature)/%3\(expiry.prefix(1))\(expiry.dropFirst())/\(encoded)", 400),
      ("/v1/a/\(signature)/\(expiry)%2F\(encoded)", 400),
      ("/v1/a/\(signature)/\(encoded)", 403),
      ("/v1/e/0\(expiry)/\(sealed)", 400),
      ("/v1/e/\(expiry)/\(sealed)=", 400),
      ("/v1/e/\(expiry)/\(sealed)==", 400),
      ("/v1/e/\(expiry)/\(escapedSealed)", 400),
      ("\(hidden)?", 400),
      ("\(hidden)/", 400),
      ("/v1/E/\(expiry)/\(sealed)", 400),
      ("/v1/e/\(sealed)", 403),
    ]
    for (target, status) in variants {
      let answer = try await raw(target, port: serve.port)
      #expect(answer.status == status, "\(target): \(answer.text.prefix(80))")
      #expect(!answer.text.contains("GIF8"), "\(target) was answered with the file")
      #expect(answer.text.contains("no-store"), "\(target)")
    }
    #expect(origin.requestCount(path: "/ab.gif") == 1)
  }

  @Test("a hidden path's origin errors keep their code and status but do not name the origin")
  func hiddenOriginErrorsWithheld() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let signer = try URLSigner(keyFile: workspace.keyFile)
    // Nothing listens on the discard port: curl's message names the address it tried.
    let closed = "http://127.0.0.1:9/secret-origin.gif"
    let signed = try await Curl.get(serve.url(try signer.path(for: closed)))
    #expect(signed.status == 502 && signed.errorCode == "connect_failed")
    #expect(String(decoding: signed.body, as: UTF8.self).contains("127.0.0.1"), "the signed answer names it")
    for url in [closed, origin.url("/missing-origin.gif")] {
      let hidden = try await Curl.get(serve.url(try signer.path(for: url, route: .hidden)))
      let text = String(decoding: hidden.body, as: UTF8.self)
      #expect(hidden.status == 502, "\(url): \(text)")
      #expect(hidden.errorCode == "connect_failed" || hidden.errorCode == "http_status", "\(text)")
      #expect(!text.contains("127.0.0.1") && !text.contains("origin.gif"), "\(text)")
    }
  }

  @Test(
    "a path signed before expiring and hidden paths existed still verifies (its origin is down: 502, not 403)"
  )
  func oldPathStillVerifies() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    for old in [RouteTableTests.oldFilePath, RouteTableTests.oldInfoPath] {
      let answer = try await Curl.get(serve.url(old))
      #expect(answer.status != 403 && answer.status != 400, "\(old): \(answer.status)")
      #expect(
        answer.errorCode == nil || answer.errorCode == "connect_failed", "\(old): \(answer.errorCode ?? "")")
    }
    // Its file route's signature with one digit changed is refused, so the check above is a verification.
    var changed = Array(RouteTableTests.oldFilePath)
    changed[6] = changed[6] == "c" ? "d" : "c"
    #expect(try await Curl.get(serve.url(String(changed))).status == 403)
  }
}
