import Foundation
import TestSupport
import TestTraits
import Testing

/// docs/deploy.md's Varnish tier on loopback: its VCL, read from the document, in front of two
/// real `attachkit serve` processes (the shard director picks one per URL). Skipped, saying why,
/// where varnishd is not installed (CI installs it).
@Suite("attachkit serve behind Varnish", .serialized, .threadOfItsOwn)
struct DeployVarnishTests {
  @Test(
    "Varnish answers the second request itself, with the same bytes; Range and 304 from its copy; refusals kept briefly"
  )
  func varnishTier() async throws {
    guard VarnishTier.executable != nil else {
      try Skips.skipRest("varnishd is not installed (scripts/test.sh installs it)")
    }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-baseline.jpg")
    origin.serve("/v.jpg", body: jpeg, contentType: "image/jpeg")
    origin.serve("/v.html", body: Array("<html></html>".utf8), contentType: "text/html")
    let trust = ["--trust-forwarded-from", "127.0.0.1"]
    let first = try await ServeProcess(workspace: workspace, ["--cache-dir", workspace.path + "/c1"] + trust)
    defer { first.stop() }
    let second = try await ServeProcess(
      workspace: workspace, ["--cache-dir", workspace.path + "/c2"] + trust)
    defer { second.stop() }
    let varnish = try await VarnishTier(
      directory: workspace.path + "/varnish", backends: [first.port, second.port])
    defer { varnish.stop() }
    func served() -> [[String: Any]] { (first.events + second.events).filter { $0["event"] == nil } }

    let path = try await first.signed(origin.url("/v.jpg"), keyFile: workspace.keyFile)
    let miss = try await Curl.get(varnish.url(path), ["-H", "X-Forwarded-For: 203.0.113.9"])
    #expect(miss.status == 200)
    #expect(miss.header("X-Cache") == "MISS")
    #expect(Array(miss.body) == jpeg)
    #expect(miss.header("X-Attachment-Source") == nil)
    let hit = try await Curl.get(varnish.url(path))
    #expect(hit.status == 200)
    #expect(hit.header("X-Cache") == "HIT")
    #expect(Array(hit.body) == jpeg)
    #expect(hit.header("ETag") == miss.header("ETag"))
    #expect(hit.header("X-Attachment-Type-Hint") == "public.jpeg")
    #expect(hit.header("X-Attachment-Source") == nil)
    // Each answer carries its own request's id, not the one stored with the copy.
    let ids = [miss.header("X-Request-Id"), hit.header("X-Request-Id")].compactMap { $0 }
    #expect(ids.count == 2 && ids[0] != ids[1] && ids.allSatisfy { $0.hasPrefix("varnish-") }, "\(ids)")
    // The operator's routes are not passed to anyone through the tier; its probe still works.
    for route in ["/metrics", "/readyz", "/metrics?format=x"] {
      #expect(try await Curl.get(varnish.url(route)).status == 404, "\(route)")
    }
    let range = try await Curl.get(varnish.url(path), ["-H", "Range: bytes=100-199"])
    #expect(range.status == 206)
    #expect(Array(range.body) == Array(jpeg[100..<200]))
    #expect(range.header("X-Cache") == "HIT")
    let revalidated = try await Curl.get(
      varnish.url(path), ["-H", "If-None-Match: \(miss.header("ETag") ?? "")"])
    #expect(revalidated.status == 304)
    let files = served().filter { $0["route"] as? String == "attachment" }
    #expect(files.count == 1, "every answer after the first came from Varnish")
    #expect(origin.requestCount(path: "/v.jpg") == 1)
    // The tier forwards for the client (Varnish appends its peer, trusted, to what curl sent)
    // and names the request (its id, kept from a trusted tier).
    #expect(files.first?["client"] as? String == "203.0.113.9")
    #expect((files.first?["requestId"] as? String)?.hasPrefix("varnish-") == true)

    // A refusal serve remembers (422, public, max-age=30) is kept by Varnish too.
    let refusedPath = try await first.signed(origin.url("/v.html"), keyFile: workspace.keyFile)
    let refused = try await Curl.get(varnish.url(refusedPath))
    #expect(refused.status == 422)
    #expect(refused.header("Cache-Control")?.hasPrefix("public, max-age=") == true)
    let again = try await Curl.get(varnish.url(refusedPath))
    #expect(again.status == 422)
    #expect(again.header("X-Cache") == "HIT")
    #expect(origin.requestCount(path: "/v.html") == 1)
    // An upstream failure is remembered 5 s: Varnish keeps it as long, then asks again.
    let gone = "http://127.0.0.1:\(try Loopback.freePort())/gone.jpg"
    let failedPath = try await first.signed(gone, keyFile: workspace.keyFile)
    #expect(try await Curl.get(varnish.url(failedPath)).status == 502)
    #expect(try await Curl.get(varnish.url(failedPath)).header("X-Cache") == "HIT")
    #expect(
      try await eventually(within: 15) {
        try await Curl.get(varnish.url(failedPath)).header("X-Cache") == "MISS"
      })
    // A bad signature is no-store: never kept.
    let bad = "/v1/a/" + String(repeating: "0", count: 64) + "/" + path.split(separator: "/")[3]
    #expect(try await Curl.get(varnish.url(bad)).status == 403)
    #expect(try await Curl.get(varnish.url(bad)).header("X-Cache") == "MISS")
  }
  @Test(
    "an expired copy in Varnish is asked for with its ETag: serve answers 304 and the bytes stay the same")
  func varnishRevalidates() async throws {
    guard VarnishTier.executable != nil else {
      try Skips.skipRest("varnishd is not installed (scripts/test.sh installs it)")
    }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-baseline.jpg")
    origin.serve(
      "/brief.jpg", body: jpeg, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=1")],
      etag: "\"b\"")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let varnish = try await VarnishTier(
      directory: workspace.path + "/varnish", backends: [serve.port, serve.port])
    defer { varnish.stop() }
    let url = varnish.url(try await serve.signed(origin.url("/brief.jpg"), keyFile: workspace.keyFile))
    #expect(Array(try await Curl.get(url).body) == jpeg)
    // Observed: ask until serve has answered Varnish's conditional request with 304.
    var bodies: [[UInt8]] = []
    let revalidated = try await eventually(within: 15) {
      bodies.append(Array(try await Curl.get(url).body))
      return serve.events.contains { $0["route"] as? String == "attachment" && $0["status"] as? Int == 304 }
    }
    #expect(revalidated, "\(serve.log)")
    #expect(bodies.allSatisfy { $0 == jpeg })
    #expect(Array(try await Curl.get(url).body) == jpeg)
  }
}

/// Varnish with docs/deploy.md's VCL, its backends replaced by loopback ports: a child in the
/// foreground (`-F`), its working directory in the test's workspace.
final class VarnishTier {
  static let executable = ["/usr/sbin/varnishd", "/usr/bin/varnishd"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  let process: SpawnedProcess
  let port: Int

  init(directory: String, backends: [Int]) async throws {
    guard let executable = Self.executable else { throw NginxTier.TierError.missing }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var vcl = try DocsDeploy.block("vcl", containing: "directors.shard")
    for (index, backend) in backends.enumerated() {
      vcl = vcl.replacingOccurrences(
        of: ".host = \"10.0.0.1\(index + 1)\"; .port = \"8080\";",
        with: ".host = \"127.0.0.1\"; .port = \"\(backend)\";")
    }
    // The probes' 5 s interval would leave the backends sick for seconds: probe often here.
    vcl = vcl.replacingOccurrences(of: ".interval = 5s;", with: ".interval = 100ms;")
    try writeTestFile(vcl, to: directory + "/tier.vcl")
    port = try Loopback.freePort()
    process = try SpawnedProcess([
      executable, "-F", "-j", "none", "-n", directory + "/work", "-a", "127.0.0.1:\(port)",
      "-T", "127.0.0.1:0", "-f", directory + "/tier.vcl", "-s", "malloc,64m",
    ])
    // Ready when the port answers and both probes found their serve ready: /healthz passes
    // through to a backend (no-store, never kept) and is 200 only once one is healthy.
    let url = "http://127.0.0.1:\(port)/healthz"
    guard
      await eventually(within: 30, { (try? await Curl.get(url).status) == 200 })
    else {
      stop()
      throw NginxTier.TierError.didNotListen("varnishd did not answer on \(port)")
    }
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  /// Stops varnishd without waiting (for a `defer`); a thread of its own reaps it.
  func stop() { process.stop() }
}
