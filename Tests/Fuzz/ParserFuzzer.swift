// libFuzzer entry for the command-line parser. scripts/fuzz.sh compiles it with the
// ArgumentParsing sources.

/// A command tree shaped like attachkit's.
enum FuzzRoot: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "attachkit", abstract: "Fuzz root.", version: "attachkit 0",
    subcommands: [FuzzFetch.self, FuzzPrefetch.self, FuzzCache.self],
    sections: [HelpSection(title: "EXIT CODES", body: "  0  ok\n  2  usage")])
}

enum FuzzFetch: ParsableCommand {
  static let configuration = CommandConfiguration(name: "fetch", abstract: "Fetch URLs.")
  static let arguments: [ArgumentSpec] = [
    .flag(long: "json", help: "JSON."), .option(long: "cache-dir", valueName: "DIR", help: "Cache."),
    .option(long: "deadline", valueName: "SECONDS", help: "Deadline."),
    .option(long: "max-image-bytes", valueName: "BYTES", help: "Limit."),
    .positional(name: "url", help: "URLs.", repeating: true),
  ]
}

enum FuzzPrefetch: ParsableCommand {
  static let configuration = CommandConfiguration(name: "prefetch", abstract: "Prefetch.")
  static let arguments: [ArgumentSpec] = [
    .option(long: "concurrency", short: "j", valueName: "N", help: "Concurrency."),
    .flag(long: "quiet", short: "q", help: "Quiet."),
    .positional(name: "file", help: "List.", optional: true),
  ]
}

enum FuzzCache: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "cache", abstract: "Cache.", subcommands: [FuzzStats.self, FuzzGC.self])
}

enum FuzzStats: ParsableCommand {
  static let configuration = CommandConfiguration(name: "stats", abstract: "Stats.")
  static let arguments: [ArgumentSpec] = [.flag(long: "json", help: "JSON.")]
}

enum FuzzGC: ParsableCommand {
  static let configuration = CommandConfiguration(name: "gc", abstract: "GC.")
  static let arguments: [ArgumentSpec] = [.option(long: "max-bytes", valueName: "BYTES", help: "Limit.")]
}

/// Splits the input into words at NUL or newline bytes and routes them; then reads every
/// value accessor. Usage errors are expected; crashes and traps are findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let words = bytes.split(omittingEmptySubsequences: false) { $0 == 0 || $0 == 10 }.map {
    String(decoding: $0, as: UTF8.self)
  }
  let router = CommandRouter(root: FuzzRoot.self)
  do throws(UsageError) {
    switch try router.parse(words) {
    case .run(let path, let arguments):
      if path.last == "fetch" {
        _ = try? arguments.double("deadline", .positive)
        _ = try? arguments.byteCount("max-image-bytes")
        _ = arguments.positionals("url")
      } else if path.last == "prefetch" {
        _ = try? arguments.int("concurrency", .positive)
      } else if path.last == "gc" {
        _ = try? arguments.byteCount("max-bytes")
      }
    case .help(let text), .version(let text):
      _ = text.count
    }
  } catch {
    _ = error.description
  }
  _ = ByteCount.parse(String(decoding: bytes, as: UTF8.self))
  return 0
}
