import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit prefetch [FILE|-]`: warms the cache with a list of URLs before a campaign.
enum PrefetchCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "prefetch",
    abstract: "Fetch and validate a list of URLs (one per line) into the cache, concurrently.",
    discussion: """
      Reads URLs from FILE, or standard input when FILE is '-' or absent. Blank lines and lines \
      starting with '#' are skipped; duplicates share one download. Results come in input order.
      """,
    examples: [
      "attachkit prefetch campaign.txt", "cut -f3 campaign.tsv | attachkit prefetch --json - > results.jsonl",
    ],
    sections: [CommonOptions.exitCodes])

  static let concurrency = OptionKey<Int>.integer(
    long: "concurrency", short: "j", valueName: "N", bound: .positive, help: "Downloads at once (default 8).")
  static let file = PositionalKey<String>.positional(
    name: "file", valueName: "FILE", help: "A file of URLs, one per line ('-' for standard input).",
    optional: true)

  static let arguments: [any ArgumentKey] =
    [CommonOptions.json, CommonOptions.quiet, CommonOptions.noATSWarning] + PipelineOptions.all + [
      PipelineOptions.profile, concurrency, file,
    ]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    let concurrency = try arguments[Self.concurrency] ?? 8
    let timeout = try PipelineOptions.deadline(from: arguments)
    let profile = try PipelineOptions.profile(from: arguments)
    let source = arguments[file] ?? "-"
    let urls: [URLList.Entry]
    do {
      urls = try URLList.entries(from: source)
    } catch {
      throw arguments.usageError(error.message)
    }
    guard let pipeline = try CommonOptions.openPipeline(arguments) else { return .finished(.cacheUnusable) }
    try CommonOptions.checkStore(pipeline, arguments)
    let quiet = arguments[CommonOptions.quiet]
    let report = Report(
      json: arguments[CommonOptions.json], quiet: quiet,
      hidesTransportSecurity: arguments[CommonOptions.noATSWarning])
    // (redrawn in place with escape sequences: none on a pipe or a dumb terminal)
    let progress = Terminal.takesEscapes(2) && !quiet ? ProgressBar(total: urls.count) : nil
    return .run {
      let results = await Batch.run(
        inputs: urls.map(Batch.Input.init), concurrency: concurrency, pipeline: pipeline, timeout: timeout,
        profile: profile, reload: false,
        progress: progress, emit: { report.add($0) })
      progress?.clear()
      // What this run fetched reaches the fleet's store before the process exits.
      await pipeline.finishStoreWrites(timeout: .seconds(60))
      return report.finish(interrupted: results.interrupted)
    }
  }
}
