import Foundation
import TestSupport
import TestTraits
import Testing

/// Who the access log says asked: `X-Forwarded-For` and `X-Request-Id` are believed only from
/// `--trust-forwarded-from` (an address list or CIDR blocks), and hostile values (forged, huge,
/// with control characters) never break a line or leak a secret.
@Suite("serve: the access log behind a tier", .serialized, .threadOfItsOwn)
struct AccessLogForwardingTests {
  /// The last access line of `serve` once there are `count`.
  static func line(_ serve: ServeProcess, count: Int) async throws -> [String: Any] {
    #expect(await eventually(within: 30) { AccessLogTests.lines(serve).count >= count })
    return try #require(AccessLogTests.lines(serve).dropFirst(count - 1).first)
  }

  @Test(
    "from a trusted CIDR: the forwarded client is logged and a sane X-Request-Id kept; a bad one replaced")
  func trustedTier() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace, ["--trust-forwarded-from", "10.0.0.0/8, 127.0.0.0/8"])
    defer { serve.stop() }
    // The tier (127.0.0.1) appends the hop before it (10.1.2.3, also trusted) to the device's.
    let forwarded = try await Curl.get(
      serve.url("/healthz"),
      ["-H", "X-Forwarded-For: 192.0.2.200, 203.0.113.9, 10.1.2.3", "-H", "X-Request-Id: tier-42.a:b"])
    #expect(forwarded.header("X-Request-Id") == "tier-42.a:b")
    var line = try await Self.line(serve, count: 1)
    #expect(line["client"] as? String == "203.0.113.9")  // the first untrusted address from the right
    #expect(line["peer"] as? String == "127.0.0.1")
    #expect(line["forwardedFor"] as? String == "192.0.2.200, 203.0.113.9, 10.1.2.3")
    #expect(line["requestId"] as? String == "tier-42.a:b")

    // An id with a space or a quote is not kept, nor is a forwarded item that is no address.
    let bad = try await Curl.get(
      serve.url("/healthz"),
      ["-H", "X-Request-Id: a \"quoted\" id", "-H", "X-Forwarded-For: 203.0.113.9, junk"])
    let replaced = try #require(bad.header("X-Request-Id"))
    #expect(replaced.count == 32 && replaced.allSatisfy(\.isHexDigit))
    line = try await Self.line(serve, count: 2)
    #expect(line["requestId"] as? String == replaced)
    #expect(line["client"] as? String == "127.0.0.1")  // "junk" ends the walk: only the peer is believed
  }

  @Test(
    "from an untrusted peer (not in ATTACHKIT_TRUST_FORWARDED_FROM's address list): X-Forwarded-For and X-Request-Id are ignored"
  )
  func untrustedPeer() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    // The list from the environment, as a systemd EnvironmentFile would give it.
    let serve = try await ServeProcess(
      workspace: workspace, environment: ["ATTACHKIT_TRUST_FORWARDED_FROM": "192.0.2.1,198.51.100.7"])
    defer { serve.stop() }
    let answer = try await Curl.get(
      serve.url("/healthz"), ["-H", "X-Forwarded-For: 203.0.113.9", "-H", "X-Request-Id: forged-id"])
    #expect(answer.status == 200)
    #expect(answer.header("X-Request-Id") != "forged-id")
    let line = try await Self.line(serve, count: 1)
    #expect(line["client"] as? String == "127.0.0.1")
    #expect(line["forwardedFor"] == nil)
    #expect(line["requestId"] as? String == answer.header("X-Request-Id"))
  }

  @Test("--trust-forwarded-from with something that is no address or block is a usage error naming it")
  func badList() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let run = try await Run.process(
      Binaries.attachkit,
      [
        "serve", "--listen", "127.0.0.1:0", "--key-file", workspace.keyFile, "--trust-forwarded-from",
        "10.0.0.0/33",
      ])
    #expect(run.status == 2)
    #expect(run.stderr.contains("'10.0.0.0/33'"), "\(run.stderr)")
  }

  @Test(
    "a 16 KiB User-Agent with control characters, a control-character X-Request-Id and URL secrets: one valid, capped, redacted line"
  )
  func hostileValues() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/s.jpg", body: try Media.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace, ["--trust-forwarded-from", "127.0.0.1"])
    defer { serve.stop() }
    let secretURL = "http://user:hunter2@127.0.0.1:\(origin.port)/s.jpg?X-Amz-Signature=s3cr3tsig&w=1"
    let path = try await serve.signed(secretURL, keyFile: workspace.keyFile)
    let signature = String(path.split(separator: "/")[2])
    let agent = "evil\u{1b}[31m\t\u{7f}\"}{" + String(repeating: "A", count: 16 * 1024)
    let connection = try #require(RawConnection(port: serve.port))
    connection.send(
      "GET \(path) HTTP/1.1\r\nHost: t\r\nUser-Agent: \(agent)\r\nX-Request-Id: id\u{1b}x\r\nConnection: close\r\n\r\n"
    )
    let answer = await connection.readUntilClosed(idleSeconds: 10)
    #expect(answer.text.hasPrefix("HTTP/1.1 200"))

    let line = try await Self.line(serve, count: 1)  // it parsed as JSON
    let logged = try #require(line["userAgent"] as? String)
    #expect(logged.hasPrefix("evil\\u{1b}[31m\\u{9}\\u{7f}\"}{AAAA"), "\(logged.prefix(40))")
    #expect(logged.utf8.count <= 600)
    let id = try #require(line["requestId"] as? String)
    #expect(id.count == 32 && id != "id\u{1b}x")
    let raw = serve.log
    #expect(!raw.contains("hunter2"))
    #expect(!raw.contains("s3cr3tsig"))
    #expect(!raw.contains(signature))
    #expect((line["url"] as? String)?.contains("X-Amz-Signature=***&w=1") == true)
    #expect((line["path"] as? String)?.hasPrefix("/v1/a/-/") == true)
  }
}
