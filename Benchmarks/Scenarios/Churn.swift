import AttachmentKit
import Glibc

/// Scenario 5b: churn. A cache capped at 20 MiB, already full, receives 400 distinct
/// 100 KiB JPEGs at 16 calls in flight, so collection deletes as fast as the pipeline
/// publishes: the automatic sweep runs every fifth of the cap written, inline in the publishing call
/// (as on the command line), so its whole cost is inside the timed run; a background sweep
/// fell behind here and left the cache at 33 MiB after a run. Against `curl --parallel --parallel-max 16` on the same list. Each repetition
/// starts from a fresh cache filled to its cap with 400 other files (untimed); pipeline and
/// curl alternate which goes first.
enum ChurnScenario {
  /// The report section.
  static let section = "5b churn"
  /// Distinct files per timed run (as many again fill the cache first).
  static let files = 400
  /// The cache's size limit, in bytes: 20 MiB.
  static let capBytes: Int64 = 20 << 20
  /// Calls in flight.
  static let width = 16

  /// Times the pipeline and curl on the churn list and reports the medians and their ratio.
  /// - Throws: ``BenchError`` when an answer is wrong or curl fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let fill = (0..<files).map { context.server.url(ContentTree.churnPath($0)) }
    let urls = (files..<2 * files).map { context.server.url(ContentTree.churnPath($0)) }
    let repetitions = context.count(full: 5, quick: 3)
    var ours: [Duration] = []
    var curl: [Duration] = []
    var cacheBytes: [Double] = []
    for repetition in 0..<repetitions {
      let directory = context.scratch + "/caches/churn-r\(repetition)"
      Files.removeTree(directory)
      try Files.makeDirectory(directory)
      var configuration = BenchContext.configuration(cacheDirectory: directory)
      configuration.cache.maximumBytes = capBytes
      configuration.cache.sweepAfterBytes = nil  // the default: every fifth of the cap
      configuration.cache.sweepsInBackground = false
      let pipeline = try AttachmentPipeline(configuration: configuration)
      _ = try await concurrently(count: files, width: width) { index in
        try await pipeline.attachment(for: fill[index], deadline: generousDeadline()).source
      }

      func runOurs() async throws {
        let (time, answers) = try await timed {
          try await concurrently(count: files, width: width) { index in
            try await pipeline.attachment(for: urls[index], deadline: generousDeadline()).source
          }
        }
        guard answers.count == files, answers.allSatisfy({ $0 == .network }) else {
          throw BenchError("churn: not every answer came from the network")
        }
        ours.append(time)
      }
      if repetition % 2 == 0 { try await runOurs() }
      curl.append(try curlRun(context, urls: urls, name: "curl-churn-r\(repetition)").wall)
      if repetition % 2 == 1 { try await runOurs() }
      let stats = try pipeline.cache.stats()
      cacheBytes.append(Double(stats.bytes))
    }
    let oursMedian = Distribution(ours).percentile(50)
    let curlMedian = Distribution(curl).percentile(50)
    report.add(
      section, "churn \(files) × 100 KiB into a full 20 MiB cache, c=\(width), pipeline",
      key: "churn_c16_files_per_s", value: Double(files) / oursMedian, unit: .perSecond)
    report.add(
      section, "churn \(files) × 100 KiB, c=\(width), curl --parallel", key: "churn_c16_curl_files_per_s",
      value: Double(files) / curlMedian, unit: .perSecond)
    report.add(
      section, "churn: cache size after a run (largest; cap 20 MiB)", key: "churn_cache_bytes_max",
      value: cacheBytes.max() ?? 0, unit: .bytes)
    report.addRatio(
      "churn c=16, 20 MiB cap: pipeline / curl --parallel (wall time)", key: "churn_c16_ratio_curl",
      ours: oursMedian, theirs: curlMedian, goal: 1.2)
  }

  /// Measures `curl --parallel --parallel-max 16` over `urls` into a fresh directory and checks
  /// every file arrived whole.
  /// - Throws: ``BenchError`` when curl fails or a file is missing.
  static func curlRun(_ context: BenchContext, urls: [String], name: String) throws -> Subprocess.Measured {
    let directory = context.scratch + "/" + name
    Files.removeTree(directory)
    try Files.makeDirectory(directory)
    defer { Files.removeTree(directory) }
    let config = try CurlCLI.writeConfig(urls, directory: directory)
    let run = try CurlCLI.parallel(config: config, width: width)
    let written = (0..<urls.count).filter {
      Files.size("\(directory)/\($0)") == Int64(ContentTree.batchBytes)
    }
    guard written.count == urls.count else {
      throw BenchError("curl --parallel wrote \(written.count) of \(urls.count) files")
    }
    return run
  }
}
