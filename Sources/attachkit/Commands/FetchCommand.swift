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
      "attachkit fetch -o - https://cdn.example.com/push/123 > banner.jpg",
    ],
    sections: [CommonOptions.exitCodes])

  static let noCache = FlagKey(
    long: "no-cache", help: "Skip the cache lookup and download again (the result still refreshes the cache)."
  )
  static let output = OptionKey<String>.option(
    long: "output", short: "o", valueName: "FILE",
    help:
      "Copy the delivered file to FILE (replaced if it exists). When FILE is a directory, each URL's file goes into it named after the URL's last path segment with the canonical extension (…/push/123 gives 123.jpg); several URLs need a directory. '-' writes the file's bytes to standard output (one URL only), and the table or JSON lines to standard error."
  )
  static let fallback = OptionKey<String>.option(
    long: "fallback", valueName: "URL",
    help:
      "When an input fails or is refused, fetch this URL in its place within what is left of the input's deadline; an accepted fallback counts as accepted (exit 0), its record says \"fallback\": true with the input's own error under \"originalError\"."
  )
  static let urls = PositionalKey<[String]>.repeating(
    name: "url", valueName: "URL",
    help: "The URLs to fetch; '-' reads more, one per line, from standard input.")

  static let arguments: [any ArgumentKey] =
    [CommonOptions.json, CommonOptions.quiet, CommonOptions.noATSWarning] + PipelineOptions.all + [
      PipelineOptions.profile, noCache, output, fallback, urls,
    ]

  /// Parses every option, opens the one pipeline of the run, and answers at once when every
  /// URL is a fresh cache hit: no libcurl, task or thread is started then (a hit through the
  /// command line must beat `curl` on loopback). Otherwise the same pipeline fetches.
  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    var inputs = try inputs(arguments)
    let output = try outputTarget(arguments, urlCount: inputs.count)
    let timeout = try PipelineOptions.deadline(from: arguments)
    let reload = arguments[noCache]
    let profile = try PipelineOptions.profile(from: arguments)
    let fallbackInput = try fallbackInput(arguments)
    let report = Report(
      json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet],
      toStandardError: output?.toStandardOutput ?? false,
      hidesTransportSecurity: arguments[CommonOptions.noATSWarning])
    let emit: @Sendable (ResultRecord) -> Void = { report.add(output?.deliver($0) ?? $0) }
    guard let pipeline = try CommonOptions.openPipeline(arguments) else { return .finished(.cacheUnusable) }
    if !reload {
      // Each input is looked up once: up to the first that is no hit, here; the batch
      // continues from these lookups and looks up the rest itself.
      var hits: [ResultRecord] = []
      for index in inputs.indices {
        guard case .success(let url) = inputs[index].url else { break }
        let lookup = pipeline.lookup(AttachmentRequest(url: url, deadline: .now + timeout, profile: profile))
        inputs[index].lookup = lookup
        guard case .hit(let hit) = lookup else { break }
        hits.append(ResultRecord(input: inputs[index].text, attachment: hit))
      }
      if hits.count == inputs.count {
        hits.forEach(emit)
        return .finished(report.finish())
      }
    }
    // A hit never touches the store; a run that will miss checks it first.
    try CommonOptions.checkStore(pipeline, arguments)
    return .run { [inputs] in
      let results = await Batch.run(
        inputs: inputs, concurrency: 8, pipeline: pipeline, timeout: timeout, profile: profile,
        reload: reload, fallback: fallbackInput, progress: nil, emit: emit)
      await pipeline.finishStoreWrites(timeout: .seconds(30))
      return report.finish(interrupted: results.interrupted)
    }
  }

  /// The URLs to fetch: the positionals in order, each `-` replaced by the URLs standard input
  /// holds (one per line, as `prefetch` reads them).
  private static func inputs(_ arguments: ParsedArguments) throws(UsageError) -> [Batch.Input] {
    let words = arguments[Self.urls]
    guard !words.isEmpty else {
      throw arguments.usageError("fetch needs a URL (or '-' to read them from standard input)")
    }
    var inputs: [Batch.Input] = []
    for word in words {
      guard word == "-" else {
        inputs.append(Batch.Input(word))
        continue
      }
      do {
        inputs += try URLList.entries(from: "-").map(Batch.Input.init)
      } catch {
        throw arguments.usageError(error.message)
      }
    }
    return inputs
  }

  /// `--fallback`: the URL, checked once (an unusable URL is a usage error); `nil` without it.
  private static func fallbackInput(_ arguments: ParsedArguments) throws(UsageError) -> Batch.Input? {
    guard let text = arguments[fallback] else { return nil }
    let input = Batch.Input(text)
    if case .failure(let error) = input.url {
      throw arguments.usageError("--fallback: \(Terminal.safe(error.message))")
    }
    return input
  }

  /// `--output`, checked against the number of URLs: several need a directory.
  private static func outputTarget(_ arguments: ParsedArguments, urlCount: Int) throws(UsageError)
    -> FetchOutput?
  {
    guard let target = arguments[output] else { return nil }
    guard let output = FetchOutput(target: target, urlCount: urlCount) else {
      if target == "-" {
        throw arguments.usageError(
          "--output - writes one file to standard output, so it takes one URL, not \(urlCount)")
      }
      throw arguments.usageError(
        "--output \(Terminal.safe(target)) is not a directory, so it cannot take the files of \(urlCount) URLs"
      )
    }
    return output
  }
}
