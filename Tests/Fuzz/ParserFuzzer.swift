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
  static let deadline = OptionKey<Double>.number(
    long: "deadline", valueName: "SECONDS", bound: .positive, help: "Deadline.")
  static let maximumImageBytes = OptionKey<Int64>.byteCount(
    long: "max-image-bytes", valueName: "BYTES", help: "Limit.")
  static let urls = PositionalKey<[String]>.repeating(name: "url", help: "URLs.")
  static let arguments: [any ArgumentKey] = [
    FlagKey(long: "json", help: "JSON."),
    OptionKey<String>.option(long: "cache-dir", valueName: "DIR", help: "Cache."),
    deadline, maximumImageBytes, urls,
  ]
}

enum FuzzPrefetch: ParsableCommand {
  static let configuration = CommandConfiguration(name: "prefetch", abstract: "Prefetch.")
  static let concurrency = OptionKey<Int>.integer(
    long: "concurrency", short: "j", valueName: "N", bound: .positive, help: "Concurrency.")
  static let arguments: [any ArgumentKey] = [
    concurrency, FlagKey(long: "quiet", short: "q", help: "Quiet."),
    PositionalKey<String>.positional(name: "file", help: "List.", optional: true),
  ]
}

enum FuzzCache: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "cache", abstract: "Cache.", subcommands: [FuzzStats.self, FuzzGC.self])
}

enum FuzzStats: ParsableCommand {
  static let configuration = CommandConfiguration(name: "stats", abstract: "Stats.")
  static let arguments: [any ArgumentKey] = [FlagKey(long: "json", help: "JSON.")]
}

enum FuzzGC: ParsableCommand {
  static let configuration = CommandConfiguration(name: "gc", abstract: "GC.")
  static let maximumBytes = OptionKey<Int64>.byteCount(long: "max-bytes", valueName: "BYTES", help: "Limit.")
  static let arguments: [any ArgumentKey] = [maximumBytes]
}

/// Splits the input into words at NUL or newline bytes and routes them; then reads every
/// converting key. Usage errors are expected; crashes and traps are findings.
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
        _ = try? arguments[FuzzFetch.deadline]
        _ = try? arguments[FuzzFetch.maximumImageBytes]
        _ = arguments[FuzzFetch.urls]
      } else if path.last == "prefetch" {
        _ = try? arguments[FuzzPrefetch.concurrency]
      } else if path.last == "gc" {
        _ = try? arguments[FuzzGC.maximumBytes]
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
