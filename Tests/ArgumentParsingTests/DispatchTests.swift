import ArgumentParsing
import Testing

/// The way a `main.swift` dispatches on the outcome.
@Suite("Dispatch")
struct DispatchTests {
  /// What the program would do for `words`, as a string.
  func dispatch(_ words: String...) throws(UsageError) -> String {
    switch try router.parse(words) {
    case .help(let text): return "help: " + (text.split(separator: "\n").first ?? "")
    case .version(let text): return "version: " + text
    case .run(["attachkit", "fetch"], let arguments):
      return "fetch \(arguments[Fetch.url] ?? "") json=\(arguments[Fetch.json])"
    case .run(["attachkit", "cache", "gc"], let arguments):
      return "gc \(try arguments[CacheGC.maximumBytes] ?? 0)"
    case .run(let path, _): return path.joined(separator: " ")
    }
  }

  @Test("dispatches on the command path with array patterns")
  func dispatchesOnPath() throws {
    // Given command lines for each sort of outcome
    // Then each reaches its branch
    #expect(try dispatch("fetch", "-j", "https://x/a") == "fetch https://x/a json=true")
    #expect(try dispatch("cache", "gc", "--max-bytes", "1KiB") == "gc 1024")
    #expect(try dispatch("cache", "verify") == "attachkit cache verify")
    #expect(try dispatch("--version") == "version: attachkit 0.9.0 (test)")
    #expect(try dispatch("help", "cache") == "help: OVERVIEW: Inspects and trims the download cache.")
    // and an accessor's error surfaces from the run branch, about the command
    #expect(
      throws: UsageError(
        "--max-bytes expects a byte size such as 500, 10MB or 5MiB, got 'lots'",
        commandPath: ["attachkit", "cache", "gc"])
    ) { try dispatch("cache", "gc", "--max-bytes", "lots") }
  }
}
