import AttachmentKit

/// Scenario 8: peak resident memory while downloading, each case in a fresh child process
/// (this executable re-run with `--memory-probe CASE`) so earlier scenarios leave no trace in
/// the high-water mark. The child makes its pipeline (the baseline), resets `VmHWM`, downloads,
/// and prints `start`, `baseline` and `peak` in bytes.
enum MemoryScenario {
  /// The report section.
  static let section = "8 memory (fresh child process)"

  /// One child case: its name, what it downloads, and what (if anything) is downloaded before
  /// the baseline.
  struct Case: Sendable {
    /// The name passed to `--memory-probe` and used in keys.
    var name: String
    /// What the report calls it.
    var title: String
    /// The URL path downloaded.
    var path: String
    /// How many downloads run at once (each its own URL).
    var concurrent: Int
    /// A small body of the same type fetched before the baseline, so libcurl is loaded and
    /// the pages of libmagic's database that this type touches are in; `nil` for none.
    var warmUp: String?
  }

  /// Every case, in running order.
  static let cases: [Case] = [
    Case(name: "1k", title: "1 KiB JPEG, first download", path: ContentTree.hitPath(0), concurrent: 1),
    Case(
      name: "1k_warm", title: "1 KiB JPEG after a 1 KiB JPEG", path: ContentTree.hitPath(0), concurrent: 1,
      warmUp: ContentTree.hitPath(1)),
    Case(name: "45m", title: "45 MiB WAV, first download", path: ContentTree.coldPath("45m"), concurrent: 1),
    Case(
      name: "45m_warm", title: "45 MiB WAV after a 100 KiB WAV", path: ContentTree.coldPath("45m"),
      concurrent: 1, warmUp: ContentTree.coldPath("100k")),
    Case(
      name: "c64", title: "64 concurrent 1 MiB WAVs, first downloads", path: ContentTree.coldPath("1m"),
      concurrent: 64),
    Case(
      name: "c64_warm", title: "64 concurrent 1 MiB WAVs after a 100 KiB WAV",
      path: ContentTree.coldPath("1m"),
      concurrent: 64, warmUp: ContentTree.coldPath("100k")),
  ]

  /// Runs every case in its own child and reports baseline, peak and growth.
  /// - Throws: ``BenchError`` when a child fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    var resetWorked = true
    for item in cases {
      let cache = context.scratch + "/caches/memory-" + item.name
      Files.removeTree(cache)
      try Files.makeDirectory(cache)
      let outcome = try Subprocess.run(
        [
          "/proc/self/exe", "--memory-probe", item.name, "--base", context.server.baseURL, "--cache", cache,
        ], captureOutput: true)
      let fields = parse(outcome.output)
      guard outcome.status == 0, let baseline = fields["baseline"], let peak = fields["peak"] else {
        let output = String(decoding: outcome.output, as: UTF8.self)
        throw BenchError("memory probe \(item.name) exited \(outcome.status): \(output)")
      }
      resetWorked = resetWorked && fields["reset"] == 1
      if item.name == "45m" {
        report.add(
          section, "baseline RSS (pipeline made, before downloading)", key: "baseline_rss_mib",
          value: baseline, unit: .mebibytes)
      }
      report.add(
        section, "\(item.title): baseline RSS", key: "baseline_rss_\(item.name)_mib", value: baseline,
        unit: .mebibytes)
      report.add(
        section, "\(item.title): peak RSS", key: "peak_rss_\(item.name)_mib", value: peak, unit: .mebibytes)
      report.add(
        section, "\(item.title): growth over baseline", key: "growth_rss_\(item.name)_mib",
        value: peak - baseline, unit: .mebibytes)
      if let anonymous = fields["anon_after"], let anonymousBefore = fields["anon_baseline"],
        let file = fields["file_after"], let fileBefore = fields["file_baseline"]
      {
        report.add(
          section, "\(item.title): after it, anonymous RSS growth (heap, stacks)",
          key: "growth_rss_\(item.name)_anon_mib", value: anonymous - anonymousBefore, unit: .mebibytes)
        report.add(
          section, "\(item.title): after it, file-backed RSS growth (libraries, mapped files)",
          key: "growth_rss_\(item.name)_file_mib", value: file - fileBefore, unit: .mebibytes)
      }
    }
    if !resetWorked {
      report.notes.append(
        "Memory: /proc/self/clear_refs could not reset VmHWM, so peaks include the set-up's own peak.")
    }
  }

  /// `key value` lines into a dictionary.
  static func parse(_ output: [UInt8]) -> [String: Double] {
    var fields: [String: Double] = [:]
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
      let parts = line.split(separator: " ")
      if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
    }
    return fields
  }

  /// The child's side: measures case `name` against `baseURL` with a cache in `cache`, and
  /// prints `key value` lines.
  /// - Throws: when the case is unknown or a download fails.
  static func probe(name: String, baseURL: String, cache: String) async throws {
    guard let item = cases.first(where: { $0.name == name }) else {
      throw BenchError("unknown memory probe \(name)")
    }
    let start = Memory.residentBytes
    let pipeline = try AttachmentPipeline(configuration: BenchContext.configuration(cacheDirectory: cache))
    if let warmUp = item.warmUp {
      _ = try await pipeline.attachment(for: baseURL + warmUp + "?warm", deadline: generousDeadline())
    }
    let baseline = Memory.residentBytes
    let anonymousBaseline = Memory.anonymousBytes
    let fileBaseline = Memory.fileBackedBytes
    let reset = Memory.resetPeak()
    let answers = try await concurrently(count: item.concurrent, width: item.concurrent) { index in
      try await pipeline.attachment(for: baseURL + item.path + "?m=\(index)", deadline: generousDeadline())
        .source
    }
    let peak = Memory.peakBytes
    guard answers.allSatisfy({ $0 == .network }) else {
      throw BenchError("memory probe: not from the network")
    }
    print(
      """
      start \(start)
      baseline \(baseline)
      peak \(peak)
      reset \(reset ? 1 : 0)
      anon_baseline \(anonymousBaseline)
      file_baseline \(fileBaseline)
      anon_after \(Memory.anonymousBytes)
      file_after \(Memory.fileBackedBytes)
      """)
  }
}
