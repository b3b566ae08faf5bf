import AttachmentKit

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
    let count = context.tree.batchFiles
    let urls = (0..<count).map { context.server.url(ContentTree.batchPath($0)) }
    let repetitions = context.count(full: 3, quick: 1)
    for width in widths {
      var ours: [Duration] = []
      var curl: [Duration] = []
      for repetition in 0..<repetitions {
        let pipeline = try context.makePipeline("batch-c\(width)-r\(repetition)")
        let (oursTime, answers) = try await timed {
          try await concurrently(count: count, width: width) { index in
            try await pipeline.attachment(for: urls[index], deadline: generousDeadline()).source
          }
        }
        guard answers.allSatisfy({ $0 == .network }), answers.count == count else {
          throw BenchError("batch c\(width): not every answer came from the network")
        }
        ours.append(oursTime)

        let directory = context.scratch + "/curl-batch-c\(width)-r\(repetition)"
        try Files.makeDirectory(directory)
        let config = try CurlCLI.writeConfig(urls, directory: directory)
        let (curlTime, _) = try await timed { try CurlCLI.parallel(config: config, width: width) }
        let written = (0..<count).filter { Files.size("\(directory)/\($0)") == Int64(ContentTree.batchBytes) }
        guard written.count == count else {
          throw BenchError("curl --parallel c\(width) wrote \(written.count) of \(count) files")
        }
        Files.removeTree(directory)
        curl.append(curlTime)
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
}
