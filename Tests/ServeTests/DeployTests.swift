import Foundation
import TestSupport
import TestTraits
import Testing

/// The deployment of docs/deploy.md on loopback: two `attachkit serve` instances behind nginx,
/// which picks one by a consistent hash of the request URI and caches answers as a CDN would
/// (the document's own `location` blocks).
@Suite(
  "attachkit serve behind nginx", .serialized, .threadOfItsOwn,
  .requires(
    NginxTier.executable != nil, "DeployTests", "nginx is not installed (scripts/test.sh installs it)"))
struct DeployTests {
  @Test(
    "nginx proxy_cache answers the second request itself (X-Cache HIT, no serve request); one instance per URL"
  )
  func cdnTier() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-baseline.jpg")
    for index in 0..<40 { origin.serve("/m/\(index).jpg", body: jpeg, contentType: "image/jpeg") }
    let trust = ["--trust-forwarded-from", "127.0.0.1"]
    let first = try await ServeProcess(
      workspace: workspace, ["--cache-dir", workspace.path + "/cache-1"] + trust)
    defer { first.stop() }
    let second = try await ServeProcess(
      workspace: workspace, ["--cache-dir", workspace.path + "/cache-2"] + trust)
    defer { second.stop() }
    let nginx = try await NginxTier(
      directory: workspace.path + "/nginx", backends: [first.port, second.port])
    defer { nginx.stop() }
    func attachmentRequests() async throws -> Double {
      var sum = 0.0
      for serve in [first, second] {
        let text = String(decoding: try await Curl.get(serve.url("/metrics")).body, as: UTF8.self)
        sum += text.split(separator: "\n").filter {
          $0.hasPrefix("attachkit_requests_total{route=\"attachment\"")
        }
        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
      }
      return sum
    }

    let path = try await first.signed(origin.url("/m/0.jpg"), keyFile: workspace.keyFile)
    let miss = try await Curl.get(nginx.url(path), ["-H", "X-Forwarded-For: 203.0.113.9"])
    #expect(miss.status == 200)
    #expect(miss.header("X-Cache") == "MISS")
    #expect(Array(miss.body) == jpeg)
    let hit = try await Curl.get(nginx.url(path))
    #expect(hit.status == 200)
    #expect(hit.header("X-Cache") == "HIT")
    #expect(Array(hit.body) == jpeg)
    #expect(hit.header("ETag") == miss.header("ETag"))
    #expect(hit.header("X-Attachment-Type-Hint") == "public.jpeg")
    #expect(try await attachmentRequests() == 1)  // the HIT never reached AttachmentKit
    // Each answer carries its own request's id, not the one stored with the copy.
    let ids = [miss.header("X-Request-Id"), hit.header("X-Request-Id")].compactMap { $0 }
    #expect(ids.count == 2 && ids[0] != ids[1] && ids.allSatisfy { $0.count == 32 }, "\(ids)")
    // The operator's routes are not passed to anyone through the tier.
    for route in ["/metrics", "/readyz", "/metrics?format=x"] {
      #expect(try await Curl.get(nginx.url(route)).status == 404, "\(route)")
    }
    // serve logged the client nginx forwards for, and nginx's request id (32 hex digits).
    let line = (first.events + second.events).first { $0["route"] as? String == "attachment" }
    #expect(line?["client"] as? String == "203.0.113.9")
    #expect((line?["requestId"] as? String)?.count == 32)
    let revalidated = try await Curl.get(
      nginx.url(path), ["-H", "If-None-Match: \(miss.header("ETag") ?? "")"])
    #expect(revalidated.status == 304)
    #expect(try await attachmentRequests() == 1)

    // Refusals are no-store: nginx does not keep them.
    let bad = "/v1/a/" + String(repeating: "0", count: 64) + "/" + path.split(separator: "/")[3]
    #expect(try await Curl.get(nginx.url(bad)).status == 403)
    #expect(try await Curl.get(nginx.url(bad)).header("X-Cache") == "MISS")

    // Without the CDN cache, each URL still lands on one instance every time: 40 URLs asked
    // twice make 40 upstream fetches in all, and both instances take a share. (40, not 10: the
    // URLs hold the origin's port, new each run, and 10 of them all hashed to one instance in
    // one CI run; with 40 the chance of that is below 10⁻¹¹.)
    for _ in 0..<2 {
      for index in 0..<40 {
        let signed = try await first.signed(origin.url("/m/\(index).jpg"), keyFile: workspace.keyFile)
        #expect(try await Curl.get(nginx.directURL(signed)).status == 200)
      }
    }
    var upstream: [Double] = []
    for serve in [first, second] {
      upstream.append(try await serve.metric("attachkit_upstream_requests_total") ?? -1)
    }
    #expect(upstream.reduce(0, +) == 40)
    #expect(upstream.allSatisfy { $0 > 0 }, "\(upstream)")
    for index in 0..<40 { #expect(origin.requestCount(path: "/m/\(index).jpg") == 1) }
  }
}

/// nginx as the CDN tier of docs/deploy.md: an unprivileged child with a generated
/// configuration; one port through `proxy_cache`, another straight to the hashed upstream.
final class NginxTier {
  static let executable = ["/usr/sbin/nginx", "/usr/bin/nginx"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  let process: SpawnedProcess
  let port: Int
  let directPort: Int

  init(directory: String, backends: [Int]) async throws {
    guard let executable = Self.executable else { throw TierError.missing }
    try FileManager.default.createDirectory(atPath: directory + "/temp", withIntermediateDirectories: true)
    port = try Loopback.freePort()
    directPort = try Loopback.freePort()
    let servers = backends.map { "    server 127.0.0.1:\($0);" }.joined(separator: "\n")
    let locations = try Self.documentedLocations()
    let configuration = """
      daemon off;
      master_process off;
      worker_processes 1;
      pid \(directory)/nginx.pid;
      error_log \(directory)/error.log warn;
      events { worker_connections 1024; }
      http {
        access_log off;
        client_body_temp_path \(directory)/temp/body;
        proxy_temp_path \(directory)/temp/proxy;
        fastcgi_temp_path \(directory)/temp/fastcgi;
        uwsgi_temp_path \(directory)/temp/uwsgi;
        scgi_temp_path \(directory)/temp/scgi;
        proxy_cache_path \(directory)/cache keys_zone=media:10m max_size=1g inactive=7d use_temp_path=off;
        upstream attach {
          hash $request_uri consistent;
      \(servers)
          keepalive 32;
        }
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        server {
          listen 127.0.0.1:\(port);
      \(locations)
        }
        server {
          listen 127.0.0.1:\(directPort);
          location / { proxy_pass http://attach; }
        }
      }

      """
    try writeTestFile(configuration, to: directory + "/nginx.conf")
    process = try SpawnedProcess(
      [executable, "-p", directory + "/", "-c", directory + "/nginx.conf", "-e", directory + "/error.log"])
    let port = port
    guard await eventually(within: 30, { RawConnection(port: port) != nil }) else {
      stop()
      throw TierError.didNotListen(
        (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "")
    }
  }

  enum TierError: Error {
    case missing
    case didNotListen(String)
    case undocumented
  }

  /// The `location` blocks of docs/deploy.md's nginx server, as written there: the lines after
  /// its `server_name` up to the server's closing brace.
  static func documentedLocations() throws -> String {
    let block = try DocsDeploy.block("nginx", containing: "proxy_cache_path")
    let lines = block.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(where: { $0.contains("server_name") }),
      let end = lines.lastIndex(where: { $0 == "}" }), start < end
    else { throw TierError.undocumented }
    return lines[(start + 1)..<end].joined(separator: "\n")
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  func directURL(_ path: String) -> String { "http://127.0.0.1:\(directPort)\(path)" }

  /// Stops nginx without waiting (for a `defer`); a thread of its own reaps it.
  func stop() { process.stop() }
}
