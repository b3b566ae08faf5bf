import AttachmentKit
import Glibc

/// Scenarios 2 and 3: cold downloads through the pipeline (fetch, sniff, hash, validate,
/// publish), and the same bodies through `URLSession` (to a file) and the `curl` command line,
/// round-robin in the same run so drift hits all three alike. Every iteration asks for a new
/// URL (`?i=N`) of a body no earlier iteration had, so the pipeline never answers from its
/// cache and publishes new content each time (no shortcut for content it already holds).
enum ColdDownloadScenario {
  /// The report section of our own downloads.
  static let section = "2 cold download"
  /// The report section of the comparisons.
  static let comparisonSection = "3 cold download, other clients"

  /// Iterations per size, full run.
  static let fullIterations = ["100k": 200, "1m": 100, "10m": 30, "45m": 15]
  /// Iterations per size, quick run.
  static let quickIterations = ["100k": 20, "1m": 10, "10m": 5, "45m": 3]
  /// Unrecorded warm-up iterations per size and client.
  static func warmUps(quick: Bool) -> Int { quick ? 1 : 3 }

  /// Distinct bodies each size needs: one per iteration, warm-ups included.
  static func bodiesNeeded(quick: Bool) -> [String: Int] {
    (quick ? quickIterations : fullIterations).mapValues { $0 + warmUps(quick: quick) }
  }

  /// Human names of the sizes.
  static let sizeNames = ["100k": "100 KiB", "1m": "1 MiB", "10m": "10 MiB", "45m": "45 MiB"]

  /// Times the three clients on every size.
  /// - Throws: when a download fails or is answered from the cache.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let pipeline = try context.makePipeline("cold")
    let downloads = context.scratch + "/downloads"
    try Files.makeDirectory(downloads)
    let session = URLSessionClient(directory: downloads)
    defer { session.invalidate() }
    var sequence = 0
    for size in ContentTree.coldSizes {
      let iterations =
        (context.quick ? quickIterations[size.label] : fullIterations[size.label]) ?? 10
      let warmUps = warmUps(quick: context.quick)
      let bodies = max(1, context.tree.coldFiles[size.label] ?? 1)
      var ours: [Duration] = []
      var theirs: [Duration] = []
      var curl: [Duration] = []
      for iteration in 0..<(warmUps + iterations) {
        sequence += 1
        let url = context.server.url(
          ContentTree.coldPath(size.label, iteration % bodies), iteration: sequence)
        let (oursTime, attachment) = try await timed {
          try await pipeline.attachment(for: url, deadline: generousDeadline())
        }
        guard attachment.source == .network, attachment.bytes == Int64(size.bytes) else {
          throw BenchError("cold \(size.label): \(attachment.source), \(attachment.bytes) bytes")
        }
        let file = downloads + "/session-\(sequence)"
        let (sessionTime, sessionBytes) = try await timed {
          try await session.download(url, name: "session-\(sequence)")
        }
        unlink(file)
        let curlFile = downloads + "/curl-\(sequence)"
        let (curlTime, curlBytes) = try await timed { try CurlCLI.download(url, to: curlFile) }
        unlink(curlFile)
        guard sessionBytes == Int64(size.bytes), curlBytes == Int64(size.bytes) else {
          throw BenchError("cold \(size.label): URLSession \(sessionBytes), curl \(curlBytes) bytes")
        }
        guard iteration >= warmUps else { continue }
        ours.append(oursTime)
        theirs.append(sessionTime)
        curl.append(curlTime)
      }
      let name = sizeNames[size.label] ?? size.label
      let oursDistribution = Distribution(ours)
      let sessionDistribution = Distribution(theirs)
      let curlDistribution = Distribution(curl)
      report.add(
        section, "cold \(name) WAV, pipeline", key: "cold_\(size.label)", unit: .ms, oursDistribution)
      report.add(
        comparisonSection, "cold \(name), URLSession to file", key: "urlsession_\(size.label)", unit: .ms,
        sessionDistribution)
      report.add(
        comparisonSection, "cold \(name), curl -s -o FILE (new process)", key: "curl_\(size.label)",
        unit: .ms, curlDistribution)
      report.addRatio(
        "cold \(name): pipeline / URLSession", key: "urlsession_\(size.label)_ratio",
        ours: oursDistribution.percentile(50), theirs: sessionDistribution.percentile(50),
        goal: size.label == "45m" ? 1.0 : nil)
      report.addRatio(
        "cold \(name): pipeline / curl CLI", key: "curl_\(size.label)_ratio",
        ours: oursDistribution.percentile(50), theirs: curlDistribution.percentile(50),
        goal: size.label == "45m" ? 1.0 : nil)
    }
  }
}
