import Foundation
import TestSupport
import TestTraits
import Testing

/// Three `attachkit serve --rescue --store …` instances, each with a cache directory of its own,
/// behind nginx round-robin, sharing one real SeaweedFS: a URL that needs a transcode is fetched
/// from the origin once and transcoded once for the whole fleet (one media job and one lease,
/// from each instance's metrics), and every client gets the same bytes.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn): a parallel run that started
// several at once starved the machine for seconds, and unrelated 30 s deadlines passed.
@Suite(
  "serve fleet: one store behind round-robin (SeaweedFS, nginx)", .objectStore("FleetServeTests"),
  .rescueTurn, .threadOfItsOwn)
struct FleetServeTests {
  @Test(
    "60 concurrent requests for one 40 s WebM through three instances: one origin request, one transcode, one lease, the same bytes; a fourth, empty instance then answers from the store without a rescue"
  )
  func oneTranscodePerFleet() async throws {
    guard let nginx = NginxTier.executable else {
      Issue.record("nginx is not installed (scripts/install-deps.sh installs it)")
      return
    }
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = NSTemporaryDirectory() + "fleet-webm-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    origin.serve("/clip.webm", body: try await Self.webm(seconds: 40, in: scratch), contentType: "video/webm")
    let environment = [
      "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": store.secretKey,
      "AWS_ENDPOINT_URL_S3": store.endpoint, "ATTACHKIT_STORE": "s3://attachkit-fleet/serve",
    ]
    let workspaces = try (0..<3).map { _ in try Workspace() }
    defer { for workspace in workspaces { workspace.remove() } }
    var fleet: [ServeProcess] = []
    defer { for serve in fleet { serve.stop() } }
    for workspace in workspaces {
      fleet.append(try await ServeProcess(workspace: workspace, ["--rescue"], environment: environment))
    }
    let tier = try await RoundRobin(
      directory: workspaces[0].path + "/nginx", nginx: nginx, backends: fleet.map(\.port))
    defer { tier.stop() }
    let path = try await fleet[0].signed(origin.url("/clip.webm"), keyFile: workspaces[0].keyFile)

    let url = tier.url(path)
    let answers = try await withThrowingTaskGroup(of: CurlAnswer.self) { group in
      for _ in 0..<60 { group.addTask { try await Curl.get(url, ["--max-time", "60"]) } }
      return try await group.reduce(into: [CurlAnswer]()) { $0.append($1) }
    }

    #expect(answers.map(\.status).allSatisfy { $0 == 200 }, "\(answers.map(\.status))")
    #expect(Set(answers.map(\.body)).count == 1)
    #expect(answers.first?.header("content-type") == "video/mp4")
    #expect(origin.requestCount(path: "/clip.webm") == 1)
    var leases = 0.0
    var transcodes = 0.0
    for serve in fleet {
      leases += try await serve.metric("attachkit_store_leases_taken_total") ?? 0
      transcodes += try await serve.metric("attachkit_worker_jobs_total{job=\"media\"}") ?? 0
    }
    #expect(leases == 1)
    #expect(transcodes == 1)

    // A fourth instance started afterwards, its cache empty: the same URL from the store, without
    // the origin and without a rescue
    let late = try Workspace()
    defer { late.remove() }
    let fourth = try await ServeProcess(workspace: late, ["--rescue"], environment: environment)
    defer { fourth.stop() }
    let fromStore = try await Curl.get(fourth.url(path), ["--max-time", "60"])
    #expect(fromStore.status == 200)
    #expect(fromStore.body == answers.first?.body)
    #expect(origin.requestCount(path: "/clip.webm") == 1)
    #expect(try await fourth.metric("attachkit_worker_jobs_total{job=\"media\"}") == 0)
    #expect(try await fourth.metric("attachkit_store_hits_total") == 1)
  }

  /// A `seconds`-long 320×240 VP9 + Opus WebM (a codec iOS does not play: a transcode), made by
  /// ffmpeg in `scratch`.
  static func webm(seconds: Int, in scratch: String) async throws -> [UInt8] {
    let source = scratch + "/clip.webm"
    let made = try await Run.process(
      "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "testsrc2=duration=\(seconds):size=320x240:rate=24", "-f", "lavfi", "-i",
        "sine=frequency=440:duration=\(seconds)", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used",
        "8",
        "-b:v", "200k", "-c:a", "libopus", "-shortest", source,
      ])
    try #require(made.status == 0, "ffmpeg failed")
    return Array(try Data(contentsOf: URL(fileURLWithPath: source)))
  }
}

extension FleetServeTests {
  @Test(
    "the lease holder SIGKILLed mid-transcode: another instance takes over once the lease expires; no client past its deadline"
  )
  func holderKilledMidTranscode() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let scratch = NSTemporaryDirectory() + "fleet-kill-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve(
      "/long.avi", body: try await RescueWorkerServeTests.longAVI(in: scratch), contentType: "video/x-msvideo"
    )
    let environment = [
      "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": store.secretKey,
      "AWS_ENDPOINT_URL_S3": store.endpoint, "ATTACHKIT_STORE": "s3://attachkit-fleet/kill",
    ]
    let workspaces = try (0..<3).map { _ in try Workspace() }
    defer { for workspace in workspaces { workspace.remove() } }
    var fleet: [ServeProcess] = []
    defer { for serve in fleet { serve.stop() } }
    // A long deadline: a waiter gives up waiting after half of its time and does the work itself
    // (a third origin request), so half of it must outlast the lease (30 s) and the takeover's
    // transcode on a loaded machine (both took 128 s under a parallel run with a 90 s deadline).
    for workspace in workspaces {
      fleet.append(
        try await ServeProcess(
          workspace: workspace, ["--rescue", "--deadline", "600"], environment: environment))
    }
    let path = try await fleet[0].signed(origin.url("/long.avi"), keyFile: workspaces[0].keyFile)

    // The first instance takes the lease and is seen transcoding (its worker spending CPU)
    let holder = fleet[0].process.processIdentifier
    var first = RawConnection(port: fleet[0].port)
    try #require(first != nil)
    first?.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    let worker = try #require(
      await RescueWorkerServeTests.transcodingWorker(of: holder), "no transcode was seen")
    // The two others are asked and wait for the holder's record
    let asked = ContinuousClock.now
    let waiting = [fleet[1].url(path), fleet[2].url(path)].map { url in
      Task { try await Curl.get(url, ["--max-time", "660"]) }
    }
    let waits = await eventually(within: 30) {
      var total = 0.0
      for serve in fleet.dropFirst() {
        total += (try? await serve.metric("attachkit_store_lease_waits_total")) ?? 0
      }
      return total == 2
    }
    #expect(waits, "the two other instances did not wait for the lease")
    // The holder dies mid-transcode
    kill(holder, SIGKILL)
    kill(worker, SIGKILL)
    first = nil

    var answers: [CurlAnswer] = []
    for task in waiting { answers.append(try await task.value) }
    let elapsed = ContinuousClock.now - asked
    #expect(answers.map(\.status) == [200, 200], "\(answers.map(\.status))")
    #expect(Set(answers.map(\.body)).count == 1)
    #expect(answers.first?.header("content-type") == "video/mp4")
    #expect(elapsed < .seconds(600) + deadlineMargin, "answered after \(elapsed)")
    var taken = 0.0
    for serve in fleet.dropFirst() {
      taken += try await serve.metric("attachkit_store_leases_taken_total") ?? 0
    }
    #expect(taken == 1)
    #expect(origin.requestCount(path: "/long.avi") == 2)
  }
}

/// nginx in front of `backends`, round-robin, no cache of its own.
final class RoundRobin {
  let process: SpawnedProcess
  let port: Int

  init(directory: String, nginx: String, backends: [Int]) async throws {
    try FileManager.default.createDirectory(atPath: directory + "/temp", withIntermediateDirectories: true)
    port = try Loopback.freePort()
    let servers = backends.map { "    server 127.0.0.1:\($0);" }.joined(separator: "\n")
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
        upstream attach {
      \(servers)
          keepalive 32;
        }
        server {
          listen 127.0.0.1:\(port);
          location / {
            proxy_pass http://attach;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_read_timeout 60s;
          }
        }
      }

      """
    try writeTestFile(configuration, to: directory + "/nginx.conf")
    process = try SpawnedProcess([
      nginx, "-p", directory + "/", "-c", directory + "/nginx.conf", "-e", directory + "/error.log",
    ])
    let port = port
    guard await eventually(within: 30, { RawConnection(port: port) != nil }) else {
      stop()
      throw NginxTier.TierError.didNotListen(
        (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "")
    }
  }

  func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

  func stop() { process.stop() }
}
