import ArgumentParsing

// A made-up command tree shaped like attachkit's: `fetch URL`, `prefetch [FILE|-]`,
// `validate FILE...`, and the `cache` group with `stats`, `verify`, `gc` and `clear`.

/// The root: a group with a version.
enum AttachKit: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "attachkit", abstract: "Fetches, checks and caches message attachments.",
    version: "attachkit 0.9.0 (test)",
    subcommands: [Fetch.self, Prefetch.self, Validate.self, Cache.self],
    sections: [HelpSection(title: "Exit codes", body: "  0  success\n  2  usage error")])
}

/// `attachkit fetch URL`: every sort of option, one positional, free-form sections.
enum Fetch: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "fetch", abstract: "Downloads one attachment and reports what it is.",
    discussion: "The download goes to a private temporary file, is checked, and is moved into the cache.",
    examples: ["attachkit fetch --json https://example.com/a.png"],
    sections: [
      HelpSection(
        title: "Exit codes",
        body: "  0    fetched and valid\n  1    fetched but refused\n  2    usage error")
    ])
  static let json = FlagKey(long: "json", short: "j", help: "Print the result as one JSON object.")
  static let cacheDirectory = OptionKey<String>.option(
    long: "cache-dir", short: "d", valueName: "DIR", help: "Where cached downloads live.")
  static let deadline = OptionKey<Double>.number(
    long: "deadline", valueName: "SECONDS", bound: .positive,
    help: "Give up after this many seconds, counting every retry and redirect, so that a slow "
      + "server cannot hold the pipeline up for longer than the caller is willing to wait.")
  static let noCache = FlagKey(long: "no-cache", help: "Neither read nor write the cache.")
  static let header = OptionKey<String>.option(
    long: "header", valueName: "NAME:VALUE", help: "An extra request header; repeatable.")
  static let url = PositionalKey<String>.positional(name: "url", help: "The attachment's URL.")
  static let arguments: [any ArgumentKey] = [json, cacheDirectory, deadline, noCache, header, url]
}

/// `attachkit prefetch [FILE|-]`: numeric options and an optional positional.
enum Prefetch: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "prefetch", abstract: "Fetches every URL listed in a file, several at a time.")
  /// What `--format` accepts.
  enum Format: String, CaseIterable, Sendable {
    case text, json
  }

  static let concurrency = OptionKey<Int>.integer(
    long: "concurrency", short: "c", valueName: "N", bound: .positive, help: "How many downloads run at once."
  )
  static let json = FlagKey(long: "json", help: "Print one JSON object per URL.")
  static let maximumBytes = OptionKey<Int64>.byteCount(
    long: "max-bytes", valueName: "SIZE", help: "Refuse bodies larger than this.")
  static let retries = OptionKey<Int>.integer(long: "retries", valueName: "N", help: "Retries per URL.")
  static let total = OptionKey<Int64>.integer(
    long: "total", valueName: "BYTES", help: "Stop after this many bytes in all.")
  static let format = OptionKey<Format>.choice(long: "format", valueName: "FORMAT", help: "text or json.")
  static let file = PositionalKey<String>.positional(
    name: "file", valueName: "FILE|-", help: "The list of URLs, one a line; - reads standard input.",
    optional: true)
  static let arguments: [any ArgumentKey] = [concurrency, json, maximumBytes, retries, total, format, file]
}

/// `attachkit validate FILE...`: a repeating positional.
enum Validate: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "validate", abstract: "Checks files already on disk.")
  static let json = FlagKey(long: "json", help: "Print one JSON object per file.")
  static let files = PositionalKey<[String]>.repeating(
    name: "files", valueName: "FILE", help: "The files to check.")
  static let arguments: [any ArgumentKey] = [json, files]
}

/// `attachkit cache`: a nested group.
enum Cache: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "cache", abstract: "Inspects and trims the download cache.",
    subcommands: [CacheStats.self, CacheVerify.self, CacheGC.self, CacheClear.self])
}

/// `attachkit cache stats`.
enum CacheStats: ParsableCommand {
  static let configuration = CommandConfiguration(name: "stats", abstract: "Shows the cache's size.")
  static let json = FlagKey(long: "json", help: "Print JSON.")
  static let arguments: [any ArgumentKey] = [json]
}

/// `attachkit cache verify`.
enum CacheVerify: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "verify", abstract: "Re-hashes every cached file.")
}

/// `attachkit cache gc`.
enum CacheGC: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "gc", abstract: "Deletes the oldest entries until the cache fits.")
  static let maximumBytes = OptionKey<Int64>.byteCount(
    long: "max-bytes", valueName: "N", help: "The size to trim the cache to.")
  static let maximumAge = OptionKey<Int>.integer(
    long: "max-age", valueName: "DAYS", bound: .positive, help: "Also delete entries older than this.")
  static let arguments: [any ArgumentKey] = [maximumBytes, maximumAge]
}

/// `attachkit cache clear`.
enum CacheClear: ParsableCommand {
  static let configuration = CommandConfiguration(name: "clear", abstract: "Empties the cache.")
  static let yes = FlagKey(long: "yes", short: "y", help: "Do not ask first.")
  static let arguments: [any ArgumentKey] = [yes]
}

/// The router for the tree above.
let router = CommandRouter(root: AttachKit.self)

/// Routes `words` and returns the arguments of the command they run, or throws when they ask for
/// help or the version instead.
func arguments(_ words: String...) throws -> ParsedArguments {
  guard case .run(_, let arguments) = try router.parse(words) else { throw NotRun() }
  return arguments
}

/// The usage error routing `words` throws, or `nil` when there is none.
func usageError(_ words: String...) -> UsageError? {
  do {
    _ = try router.parse(words)
    return nil
  } catch {
    return error
  }
}

/// Thrown by ``arguments(_:)`` when the words do not run a command.
struct NotRun: Error {}
