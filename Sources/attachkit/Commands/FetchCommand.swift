import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit fetch URL...`: fetches URLs through the cache and validates them.
enum FetchCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "fetch",
    abstract: "Fetch URLs through the cache, validate them, and print where the files are.",
    discussion: "A fresh cached copy answers without touching the network; a stale one is revalidated.",
    examples: [
      "attachkit fetch https://cdn.example.com/push/123", "attachkit fetch --json --deadline 10 URL",
    ],
    sections: [CommonOptions.exitCodes])

  static let noCache = FlagKey(
    long: "no-cache", help: "Skip the cache lookup and download again (the result still refreshes the cache)."
  )
  static let urls = PositionalKey<[String]>.repeating(
    name: "url", valueName: "URL", help: "The URLs to fetch.")

  static let arguments: [any ArgumentKey] =
    [CommonOptions.json, CommonOptions.quiet] + PipelineOptions.all + [noCache, urls]

  /// Parses every option, opens the one pipeline of the run, and answers at once when every
  /// URL is a fresh cache hit: no libcurl, task or thread is started then (a hit through the
  /// command line must beat `curl` on loopback). Otherwise the same pipeline fetches.
  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    let urls = arguments[Self.urls]
    guard !urls.isEmpty else { throw arguments.usageError("fetch needs a URL") }
    let timeout = try PipelineOptions.deadline(from: arguments)
    let reload = arguments[noCache]
    let report = Report(json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet])
    guard let pipeline = try CommonOptions.openPipeline(arguments) else { return .finished(.cacheUnusable) }
    var inputs = urls.map(Batch.Input.init)
    if !reload {
      // Each input is looked up once: up to the first that is no hit, here; the batch
      // continues from these lookups and looks up the rest itself.
      var hits: [ResultRecord] = []
      for index in inputs.indices {
        guard case .success(let url) = inputs[index].url else { break }
        let lookup = pipeline.lookup(url)
        inputs[index].lookup = lookup
        guard case .hit(let hit) = lookup else { break }
        hits.append(ResultRecord(input: inputs[index].text, attachment: hit))
      }
      if hits.count == urls.count {
        hits.forEach(report.add)
        return .finished(report.finish())
      }
    }
    return .run { [inputs] in
      let results = await Batch.run(
        inputs: inputs, concurrency: 8, pipeline: pipeline, timeout: timeout, reload: reload, progress: nil,
        emit: { report.add($0) })
      return report.finish(interrupted: results.interrupted)
    }
  }
}
