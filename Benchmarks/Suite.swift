import Glibc

/// Runs the scenarios in order against one server and collects the report.
enum Suite {
  /// A scenario: a name for `--only` and its body.
  typealias Scenario = (name: String, run: (BenchContext, inout Report) async throws -> Void)

  /// Every scenario in running order.
  static var scenarios: [Scenario] {
    [
      ("hit", CacheHitScenario.run),
      ("cold", ColdDownloadScenario.run),
      ("revalidate", RevalidationScenario.run),
      ("confirm", HitConfirmationScenario.run),
      ("batch", BatchScenario.run),
      ("churn", ChurnScenario.run),
      ("refuse", EarlyRefusalScenario.run),
      ("deadline", DeadlineScenario.run),
      ("memory", MemoryScenario.run),
      ("scale", CacheScaleScenario.run),
      ("serve", ServeScenario.run),
      ("rescue", RescueScenario.run),
      ("onepass", OnePassScenario.run),
      ("mediarescue", MediaRescueScenario.run),
      ("workers", RescueWorkerCostScenario.run),
      ("decode", DecodeCheckCostScenario.run),
      ("store", StoreHitScenario.run),
      ("fleet", FleetWorkScenario.run),
    ]
  }

  /// Makes the files, starts the server, runs the chosen scenarios, stops the server and
  /// removes the scratch directory.
  /// - Throws: when set-up or a scenario fails.
  static func run(_ options: Options) async throws -> Report {
    let scratch = try Files.makeTemporaryDirectory(prefix: "attachkit-bench", in: options.directory)
    chmod(scratch, 0o755)
    defer {
      Files.removeTree(scratch)
      log("removed \(scratch)")
    }
    let www = try documentRoot(scratch: scratch)
    defer { Files.removeTree(www) }
    log("generating bodies in \(www)")
    var cold = options.runs("cold") ? ColdDownloadScenario.bodiesNeeded(quick: options.quick) : [:]
    if options.runs("onepass") { cold["45m"] = max(cold["45m"] ?? 0, 1) }  // its command-line cold run
    let tree = try ContentTree(
      root: www, hitFiles: 1_000, batchFiles: options.quick ? 100 : 400,
      churnFiles: options.runs("churn") ? 2 * ChurnScenario.files : 0, coldFiles: cold)
    let server = try startServer(options: options, tree: tree, scratch: scratch)
    defer {
      server.stop()
      log("stopped the server")
    }
    log("server: \(server.name) at \(server.baseURL)")
    let context = BenchContext(options: options, server: server, tree: tree, scratch: scratch)
    var report = Report()
    report.facts = Facts.collect(options: options, server: server, scratch: scratch, documentRoot: www)
    for scenario in scenarios where options.runs(scenario.name) {
      log("scenario \(scenario.name)…")
      let start = ContinuousClock.now
      try await scenario.run(context, &report)
      log("scenario \(scenario.name) took \(Format.seconds((ContinuousClock.now - start).seconds))")
    }
    report.facts.append(("load_average_at_end", Facts.loadAverage()))
    return report
  }

  /// Where the server's files go: a fresh directory in `/dev/shm` (tmpfs) when there is one,
  /// so generating a gigabyte of bodies causes no disk writeback during the measurements;
  /// else `scratch/www`.
  /// - Throws: ``BenchError`` when no directory can be made.
  static func documentRoot(scratch: String) throws -> String {
    if access("/dev/shm", W_OK) == 0,
      let shm = try? Files.makeTemporaryDirectory(prefix: "attachkit-www", in: "/dev/shm")
    {
      chmod(shm, 0o755)
      return shm
    }
    let www = scratch + "/www"
    try Files.makeDirectory(www)
    return www
  }

  /// nginx when asked for or (with `auto`) installed; else the built-in server.
  /// - Throws: when the chosen server cannot start.
  static func startServer(options: Options, tree: ContentTree, scratch: String) throws -> any MediaServer {
    switch options.server {
    case "builtin":
      return try BuiltInServer(tree: tree)
    case "nginx":
      return try NginxServer(tree: tree, directory: scratch)
    default:
      do {
        return try NginxServer(tree: tree, directory: scratch)
      } catch {
        log("nginx unavailable (\(error)); using the built-in TestHTTPServer")
        return try BuiltInServer(tree: tree)
      }
    }
  }
}

/// When the process started, for the progress lines.
let processStart = ContinuousClock.now

/// Writes a progress line, stamped with the seconds since start, to standard error.
func log(_ message: String) {
  let elapsed = (ContinuousClock.now - processStart).seconds
  printError("[bench \(Int(elapsed * 10) / 10).\(Int(elapsed * 10) % 10)s] \(message)")
}

/// Writes `message` and a newline to standard error (descriptor 2, unbuffered).
func printError(_ message: String) {
  let bytes = Array((message + "\n").utf8)
  bytes.withUnsafeBytes { raw in
    guard let base = raw.baseAddress else { return }
    var offset = 0
    while offset < raw.count {
      let written = write(2, base + offset, raw.count - offset)
      if written <= 0 { return }
      offset += written
    }
  }
}
