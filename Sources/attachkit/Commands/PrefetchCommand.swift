import ArgumentParsing
import AttachmentKit
import Glibc
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
    [CommonOptions.json, CommonOptions.quiet] + PipelineOptions.all + [concurrency, file]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    let concurrency = try arguments[Self.concurrency] ?? 8
    let timeout = try PipelineOptions.deadline(from: arguments)
    let source = arguments[file] ?? "-"
    guard let text = readInput(source) else {
      throw arguments.usageError("cannot read '\(Terminal.safe(source))'")
    }
    // One URL a line: the first word of each line, skipping blank lines and # comments.
    let urls = text.split(whereSeparator: \.isNewline)
      .compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
      .filter { !$0.hasPrefix("#") }
    guard let pipeline = try CommonOptions.openPipeline(arguments) else { return .finished(.cacheUnusable) }
    let quiet = arguments[CommonOptions.quiet]
    let report = Report(json: arguments[CommonOptions.json], quiet: quiet)
    let progress = Terminal.isTerminal(2) && !quiet ? ProgressBar(total: urls.count) : nil
    return .run {
      let results = await Batch.run(
        inputs: urls.map(Batch.Input.init), concurrency: concurrency, pipeline: pipeline, timeout: timeout,
        reload: false,
        progress: progress, emit: { report.add($0) })
      progress?.clear()
      return report.finish(interrupted: results.interrupted)
    }
  }

  /// The whole text of a file, or of standard input for "-".
  private static func readInput(_ source: String) -> String? {
    let fd = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { if fd != 0 { close(fd) } }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { break }
      data.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: data, as: UTF8.self)
  }
}
