import Foundation
import TestSupport
import TestTraits
import Testing

/// Proxies on the command line: the environment's are ignored, an explicit one must be accepted.
@Suite("attachkit and proxies", .serialized, .threadOfItsOwn)
struct CLIProxyTests {
  @Test("proxy variables in the environment are ignored: the fetch goes direct")
  func environmentProxiesIgnored() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/ok.jpg", body: try Media.bytes("jpeg-exif.jpg"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    // Port 1 on loopback refuses connections: a proxy from the environment would fail the fetch.
    let dead = "http://127.0.0.1:1"
    let environment = [
      "http_proxy": dead, "HTTP_PROXY": dead, "https_proxy": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead,
      "all_proxy": dead, "no_proxy": "", "NO_PROXY": "",
    ]
    let result = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/cache", server.url("/ok.jpg")],
      environment: environment)
    #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    #expect(result.jsonLines.first?["outcome"] as? String == "accepted")
    #expect(server.requests(path: "/ok.jpg").map(\.target) == ["/ok.jpg"])  // direct, not absolute-form
  }

  @Test("--proxy carries the fetch; without --proxy-unchecked (and the guard on) it is a usage error")
  func explicitProxy() async throws {
    let proxy = try TestHTTPServer.start()
    defer { proxy.stop() }
    proxy.serve("/ok.jpg", body: try Media.bytes("jpeg-exif.jpg"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    let url = "http://media.example.invalid/ok.jpg"
    let guarded = ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"]
    let refused = try await CLI.run(
      ["fetch", "--cache-dir", scratch.path + "/c", "--proxy", proxy.baseURL, url], environment: guarded)
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("--proxy-unchecked"))
    #expect(proxy.totalConnections == 0)

    let accepted = try await CLI.run(
      [
        "fetch", "--json", "--cache-dir", scratch.path + "/c", "--proxy", proxy.baseURL, "--proxy-unchecked",
        url,
      ],
      environment: guarded)
    #expect(accepted.status == 0, "\(accepted.stdout) \(accepted.stderr)")
    #expect(proxy.requests(path: "/ok.jpg").map(\.target) == [url])

    let blocked = try await CLI.run(
      [
        "fetch", "--json", "--cache-dir", scratch.path + "/c", "--proxy", proxy.baseURL, "--proxy-unchecked",
        "http://169.254.169.254/latest/meta-data",
      ], environment: guarded)
    #expect(blocked.status == 4)
    #expect((blocked.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "blocked_address")
    #expect(proxy.totalRequests == 1)
  }
}
