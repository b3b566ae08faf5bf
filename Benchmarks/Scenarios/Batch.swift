import AttachmentKit
import Glibc

/// Scenario 5: a batch of distinct URLs (100 KiB JPEGs), cold, through the pipeline at a
/// fixed number of calls in flight, against `curl --parallel --parallel-max N` on the same
/// list. Each repetition of the pipeline starts with a fresh cache (and a fresh downloader,
/// hence fresh connections, like a new curl process).
enum BatchScenario {
  /// The report section.
  static let section = "5 batch"
  /// The concurrency levels measured.
  static let widths = [1, 4, 16, 64]

  /// Times every width, pipeline and curl alternating, and reports the median of the
  /// repetitions.
  /// - Throws: when a download fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    try await runCommandLine(context, into: &report)
    let count = context.tree.batchFiles
    let urls = (0..<count).map { context.server.url(ContentTree.batchPath($0)) }
    // Five in the quick run too: CI's gate reads the medians (issue #41, item 5). A run of
    // 100 files takes 40-120 ms, and this machine's speed drifts between runs (curl's own
    // rate moved from 800 to 3000 files/s), so each width starts with one untimed run of
    // each and the two then alternate which goes first: neither side is always the one
    // measured on a colder machine.
    let repetitions = context.count(full: 5, quick: 5)
    for width in widths {
      var ours: [Duration] = []
      var curl: [Duration] = []
      for repetition in -1..<repetitions {
        func runOurs() async throws {
          let pipeline = try context.makePipeline("batch-c\(width)-r\(repetition)")
          let (oursTime, answers) = try await timed {
            try await concurrently(count: count, width: width) { index in
              try await pipeline.attachment(for: urls[index], deadline: generousDeadline()).source
            }
          }
          guard answers.allSatisfy({ $0 == .network }), answers.count == count else {
            throw BenchError("batch c\(width): not every answer came from the network")
          }
          if repetition >= 0 { ours.append(oursTime) }
        }
        func runCurl() async throws {
          let directory = context.scratch + "/curl-batch-c\(width)-r\(repetition)"
          try Files.makeDirectory(directory)
          let config = try CurlCLI.writeConfig(urls, directory: directory)
          let (curlTime, _) = try await timed { try CurlCLI.parallel(config: config, width: width) }
          let written = (0..<count).filter {
            Files.size("\(directory)/\($0)") == Int64(ContentTree.batchBytes)
          }
          guard written.count == count else {
            throw BenchError("curl --parallel c\(width) wrote \(written.count) of \(count) files")
          }
          Files.removeTree(directory)
          if repetition >= 0 { curl.append(curlTime) }
        }
        if repetition % 2 == 0 {
          try await runOurs()
          try await runCurl()
        } else {
          try await runCurl()
          try await runOurs()
        }
      }
      let oursMedian = Distribution(ours).percentile(50)
      let curlMedian = Distribution(curl).percentile(50)
      report.add(
        section, "batch \(count) × 100 KiB, c=\(width), pipeline", key: "batch_c\(width)_files_per_s",
        value: Double(count) / oursMedian, unit: .perSecond)
      report.add(
        section, "batch \(count) × 100 KiB, c=\(width), curl --parallel",
        key: "batch_c\(width)_curl_files_per_s", value: Double(count) / curlMedian, unit: .perSecond)
      report.addRatio(
        "batch c=\(width): pipeline / curl --parallel (wall time)", key: "batch_c\(width)_ratio_curl",
        ours: oursMedian, theirs: curlMedian, goal: width == 16 ? 1.0 : nil)
    }
  }

  /// The batch as a user runs it: the command line `attachkit prefetch -j 16` (the release
  /// build next to the benchmark, or `--attachkit PATH`) over the 400-URL list, a fresh cache
  /// each run, against `curl --parallel --parallel-max 16` on the same list; the two
  /// alternate which goes first. Both are new processes with new connections.
  /// - Throws: ``BenchError`` when a run fails.
  static func runCommandLine(_ context: BenchContext, into report: inout Report) async throws {
    guard let binary = commandLineBinary(context), access(binary, X_OK) == 0 else {
      log("batch: no attachkit binary next to the benchmark; skipping the command-line batch")
      return
    }
    let count = context.tree.batchFiles
    let urls = (0..<count).map { context.server.url(ContentTree.batchPath($0)) }
    let list = context.scratch + "/batch-urls.txt"
    try Files.write(urls.joined(separator: "\n") + "\n", to: list)
    setenv("ATTACHKIT_ALLOW_PRIVATE_NETWORKS", "1", 1)  // the server is on loopback
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    defer { close(devNull) }
    let repetitions = context.count(full: 9, quick: 3)
    var ours: [Duration] = []
    var curl: [Duration] = []
    var oursCPU: [Duration] = []
    var curlCPU: [Duration] = []
    for repetition in 0..<repetitions {
      let cache = context.scratch + "/caches/batch-cli-r\(repetition)"
      Files.removeTree(cache)
      func runOurs() throws {
        let run = try Subprocess.measure(
          [binary, "prefetch", "-j", "16", "--quiet", "--cache-dir", cache, list], outputDescriptor: devNull)
        guard run.status == 0 else { throw BenchError("attachkit prefetch exited \(run.status)") }
        ours.append(run.wall)
        oursCPU.append(run.cpu)
      }
      if repetition % 2 == 0 { try runOurs() }
      let theirs = try ChurnScenario.curlRun(context, urls: urls, name: "curl-batch-cli-r\(repetition)")
      curl.append(theirs.wall)
      curlCPU.append(theirs.cpu)
      if repetition % 2 == 1 { try runOurs() }
      Files.removeTree(cache)
    }
    let oursMedian = Distribution(ours).percentile(50)
    let curlMedian = Distribution(curl).percentile(50)
    report.add(
      section, "batch \(count) × 100 KiB, attachkit prefetch -j 16 (new process, fresh cache)",
      key: "batch_cli_c16_files_per_s", value: Double(count) / oursMedian, unit: .perSecond)
    report.add(
      section, "batch \(count) × 100 KiB, curl --parallel --parallel-max 16 (same runs)",
      key: "batch_cli_c16_curl_files_per_s", value: Double(count) / curlMedian, unit: .perSecond)
    report.add(
      section, "batch \(count) × 100 KiB, attachkit prefetch -j 16, median wall time",
      key: "batch_cli_c16_ms",
      value: oursMedian, unit: .milliseconds)
    report.add(
      section, "batch \(count) × 100 KiB, curl --parallel, median wall time", key: "batch_cli_c16_curl_ms",
      value: curlMedian, unit: .milliseconds)
    // CPU time (user + system of each process, all its threads): on a 2-core machine that
    // also runs the server, the wall time cannot beat the CPU both processes need.
    let (oursCPUMedian, curlCPUMedian) = (
      Distribution(oursCPU).percentile(50), Distribution(curlCPU).percentile(50)
    )
    report.add(
      section, "batch \(count) × 100 KiB, attachkit prefetch -j 16, median CPU time (user + system)",
      key: "batch_cli_c16_cpu_ms", value: oursCPUMedian, unit: .milliseconds)
    report.add(
      section, "batch \(count) × 100 KiB, curl --parallel, median CPU time (user + system)",
      key: "batch_cli_c16_curl_cpu_ms", value: curlCPUMedian, unit: .milliseconds)
    report.addRatio(
      "batch, command line: prefetch -j 16 / curl --parallel (wall time)", key: "batch_cli_c16_ratio_curl",
      ours: oursMedian, theirs: curlMedian, goal: 0.8)
    report.addRatio(
      "batch, command line: prefetch -j 16 / curl --parallel (CPU time)", key: "batch_cli_c16_cpu_ratio_curl",
      ours: oursCPUMedian, theirs: curlCPUMedian)
  }

  /// The `attachkit` binary to time: `--attachkit`, else the one next to this executable.
  static func commandLineBinary(_ context: BenchContext) -> String? {
    if let explicit = context.options.attachkit { return explicit }
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    let executable = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let slash = executable.lastIndex(of: "/") else { return nil }
    return String(executable[..<slash]) + "/attachkit"
  }
}
