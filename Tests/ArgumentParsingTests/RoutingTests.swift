import ArgumentParsing
import Testing

/// Finding the command: nested subcommands, help at every level, the version.
@Suite("Routing")
struct RoutingTests {
  @Test(
    "resolves each command path, nested ones included",
    arguments: [
      (["fetch", "u"], ["attachkit", "fetch"]),
      (["prefetch"], ["attachkit", "prefetch"]),
      (["validate", "a"], ["attachkit", "validate"]),
      (["cache", "stats"], ["attachkit", "cache", "stats"]),
      (["cache", "verify"], ["attachkit", "cache", "verify"]),
      (["cache", "gc", "--max-bytes", "1G"], ["attachkit", "cache", "gc"]),
      (["cache", "clear", "-y"], ["attachkit", "cache", "clear"]),
    ])
  func resolvesPaths(words: [String], path: [String]) throws {
    // Given a command line naming a command
    // When it is routed
    let outcome = try router.parse(words)

    // Then it runs that command, whose arguments know their path
    guard case .run(let commandPath, let arguments) = outcome else {
      Issue.record("expected a command to run, got \(outcome)")
      return
    }
    #expect(commandPath == path)
    #expect(arguments.commandPath == path)
  }

  @Test("reads a nested command's own arguments")
  func nestedArguments() throws {
    // Given cache gc with options
    let parsed = try arguments("cache", "gc", "--max-age", "30", "--max-bytes=2GiB")

    // Then they belong to gc
    #expect(try parsed[CacheGC.maximumAge] == 30)
    #expect(try parsed[CacheGC.maximumBytes] == 2 << 30)
  }

  @Test("accepts the arguments as any sequence of strings, such as CommandLine's slice")
  func acceptsSlices() throws {
    // Given a program name followed by its arguments
    let commandLine = ["/usr/bin/attachkit", "cache", "clear", "--yes"]

    // When the words after the program name are routed
    let outcome = try router.parse(commandLine.dropFirst())

    // Then cache clear runs with its flag
    #expect(outcome.arguments?[CacheClear.yes] == true)
  }

  @Test("reports a group given no subcommand, listing the choices")
  func missingSubcommand() {
    // Given the root and cache with nothing after them
    // Then each lists its subcommands
    #expect(
      usageError()
        == UsageError(
          "missing subcommand (one of: fetch, prefetch, validate, cache)", commandPath: ["attachkit"]))
    #expect(
      usageError("cache")
        == UsageError(
          "missing subcommand (one of: stats, verify, gc, clear)", commandPath: ["attachkit", "cache"]))
  }

  @Test(
    "answers --help and -h at every level with that level's page",
    arguments: [
      ([], ["attachkit"]), (["fetch"], ["attachkit", "fetch"]), (["cache"], ["attachkit", "cache"]),
      (["cache", "gc"], ["attachkit", "cache", "gc"]),
    ])
  func helpFlags(path: [String], expectedPath: [String]) throws {
    let expected = try #require(router.helpText(for: expectedPath))
    for flag in ["--help", "-h"] {
      // Given the help flag after the path
      // When it is routed
      let outcome = try router.parse(path + [flag])

      // Then the page is that command's
      #expect(outcome == .help(text: expected))
    }
  }

  @Test("lets --help win over other mistakes, but not after --")
  func helpWins() throws {
    // Given --help among an unknown option and a missing value
    let outcome = try router.parse(["prefetch", "--bogus", "--concurrency", "--help"])

    // Then prefetch's help is shown
    #expect(outcome == .help(text: try #require(router.helpText(for: ["attachkit", "prefetch"]))))
    // but after -- it is only a word
    #expect(try router.parse(["validate", "--", "--help"]).arguments?[Validate.files] == ["--help"])
  }

  @Test("shows the help of the command named so far when a later word is unknown")
  func helpAfterUnknownWord() throws {
    // Given --help after a misspelt subcommand
    let outcome = try router.parse(["cache", "stast", "--help"])

    // Then the group's page is shown
    #expect(outcome == .help(text: try #require(router.helpText(for: ["attachkit", "cache"]))))
  }

  @Test(
    "answers help COMMAND [SUB] from any group",
    arguments: [
      (["help"], ["attachkit"]), (["help", "fetch"], ["attachkit", "fetch"]),
      (["help", "cache"], ["attachkit", "cache"]), (["help", "cache", "gc"], ["attachkit", "cache", "gc"]),
      (["cache", "help", "gc"], ["attachkit", "cache", "gc"]), (["cache", "help"], ["attachkit", "cache"]),
      (["help", "--help"], ["attachkit"]),
    ])
  func helpCommand(words: [String], path: [String]) throws {
    // Given the help pseudo-command
    // When it is routed
    let outcome = try router.parse(words)

    // Then the named command's page is shown
    #expect(outcome == .help(text: try #require(router.helpText(for: path))))
  }

  @Test("reports help for a command that does not exist")
  func helpForUnknown() {
    // Given help naming unknown commands
    // Then each is reported where it was looked for
    #expect(
      usageError("help", "fetsh")
        == UsageError("unknown subcommand 'fetsh' (did you mean 'fetch'?)", commandPath: ["attachkit"]))
    #expect(
      usageError("help", "cache", "nope")
        == UsageError("unknown subcommand 'nope'", commandPath: ["attachkit", "cache"]))
    #expect(
      usageError("help", "fetch", "more")
        == UsageError("'attachkit fetch' has no subcommand 'more'", commandPath: ["attachkit", "fetch"]))
  }

  @Test("answers --version on the root only, and only when it has one")
  func version() throws {
    // Given --version on the root
    #expect(try router.parse(["--version"]) == .version(text: "attachkit 0.9.0 (test)"))

    // Then on a subcommand it is an unknown option
    #expect(usageError("cache", "stats", "--version")?.message == "unknown option '--version'")

    // and on a root without a version too
    let copy = CommandRouter(root: PositionalTests.Copy.self)
    #expect(throws: UsageError("unknown option '--version'", commandPath: ["cp"])) {
      try copy.parse(["--version"])
    }
  }

  @Test("returns no help page for a path that does not exist")
  func helpTextForUnknownPath() {
    // Given paths that lead nowhere
    // Then there is no page
    #expect(router.helpText(for: []) == nil)
    #expect(router.helpText(for: ["other"]) == nil)
    #expect(router.helpText(for: ["attachkit", "cache", "nope"]) == nil)
  }
}
