import ArgumentParsing
import AttachmentKit

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

  static let arguments: [ArgumentSpec] =
    [
      CommonOptions.json, CommonOptions.quiet, CommonOptions.cacheDirectory, CommonOptions.deadline,
      CommonOptions.allowPrivateNetworks, CommonOptions.maximumCacheBytes,
    ]
    + CommonOptions.limits + [
      .flag(
        long: "no-cache",
        help: "Skip the cache lookup and download again (the result still refreshes the cache)."),
      .positional(name: "url", valueName: "URL", help: "The URLs to fetch.", repeating: true),
    ]

  /// The lean path: when every URL is a fresh cache hit, answer without starting libcurl,
  /// tasks or threads (a hit through the command line must beat `curl` on loopback).
  static func runWithoutTasks(_ arguments: ParsedArguments) throws(UsageError) -> ExitCode? {
    let urls = arguments.positionals("url")
    guard !urls.isEmpty, !arguments.flag("no-cache") else { return nil }
    let configuration = try CommonOptions.pipelineConfiguration(arguments)
    guard let pipeline = try? AttachmentPipeline(configuration: configuration) else { return nil }
    var hits: [Attachment] = []
    for url in urls {
      guard let hit = pipeline.cachedAttachment(for: url) else { return nil }
      hits.append(hit)
    }
    let report = Report(json: arguments.flag("json"), quiet: arguments.flag("quiet"))
    for (url, attachment) in zip(urls, hits) { report.add(ResultRecord(input: url, attachment: attachment)) }
    return report.finish()
  }

  static func run(_ arguments: ParsedArguments) async throws(UsageError) -> ExitCode {
    let urls = arguments.positionals("url")
    guard !urls.isEmpty else { throw arguments.usageError("fetch needs a URL") }
    let timeout = try CommonOptions.deadline(arguments)
    guard let pipeline = try CommonOptions.openPipeline(arguments) else { return .cacheUnusable }
    let report = Report(json: arguments.flag("json"), quiet: arguments.flag("quiet"))
    let results = await Batch.run(
      inputs: urls, concurrency: 8, pipeline: pipeline, timeout: timeout, reload: arguments.flag("no-cache"),
      progress: nil, emit: { report.add($0) })
    return results.interrupted ? report.finish(interrupted: true) : report.finish()
  }
}
