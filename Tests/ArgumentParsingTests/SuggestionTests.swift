import Testing

@testable import ArgumentParsing

/// Unknown options and subcommands, with and without "did you mean".
@Suite("Unknown names and suggestions")
struct SuggestionTests {
  @Test("suggests a declared option within two edits")
  func optionSuggestions() {
    // Given typos one edit away (a deletion, a swap), two away, and three or more away
    // Then the near ones get a suggestion and the far one none
    #expect(usageError("prefetch", "--jsn")?.message == "unknown option '--jsn' (did you mean '--json'?)")
    #expect(
      usageError("prefetch", "--concurency=4")?.message
        == "unknown option '--concurency' (did you mean '--concurrency'?)")
    #expect(
      usageError("prefetch", "--max-btyes", "1")?.message
        == "unknown option '--max-btyes' (did you mean '--max-bytes'?)")
    #expect(
      usageError("fetch", "--cach-dr", "/tmp", "u")?.message
        == "unknown option '--cach-dr' (did you mean '--cache-dir'?)")
    #expect(usageError("fetch", "--cah-dr", "/tmp", "u")?.message == "unknown option '--cah-dr'")
    #expect(usageError("prefetch", "--verbose")?.message == "unknown option '--verbose'")
  }

  @Test("suggests the long form for a long name typed with one dash")
  func singleDashLongName() {
    // Given -json
    let error = usageError("prefetch", "-json")

    // Then --json is suggested
    #expect(error?.message == "unknown option '-json' (did you mean '--json'?)")
  }

  @Test("suggests the built-in --help and, on the root, --version")
  func builtInSuggestions() {
    // Given typos of the built-ins
    // Then they are suggested where they apply
    #expect(
      usageError("cache", "verify", "--hepl")?.message == "unknown option '--hepl' (did you mean '--help'?)")
    #expect(usageError("--versoin")?.message == "unknown option '--versoin' (did you mean '--version'?)")
    #expect(usageError("fetch", "--versoin", "u")?.message == "unknown option '--versoin'")
  }

  @Test("renders the error with the program name and the command's help hint")
  func rendering() throws {
    // Given a typo on prefetch
    let error = try #require(usageError("prefetch", "--jsn"))

    // Then the two lines name the program and how to get prefetch's help
    #expect(
      error.description
        == "attachkit: unknown option '--jsn' (did you mean '--json'?)\n"
        + "Run 'attachkit prefetch --help' for usage.")
    #expect(error.commandPath == ["attachkit", "prefetch"])
  }

  @Test("reports unknown subcommands at each level, suggesting near names")
  func unknownSubcommands() {
    // Given misspelt subcommands of the root and of cache
    let root = usageError("fecth", "u")
    let nested = usageError("cache", "stast")
    let far = usageError("cache", "purge")

    // Then each is about the group it was typed under
    #expect(
      root == UsageError("unknown subcommand 'fecth' (did you mean 'fetch'?)", commandPath: ["attachkit"]))
    #expect(
      nested
        == UsageError(
          "unknown subcommand 'stast' (did you mean 'stats'?)", commandPath: ["attachkit", "cache"]))
    #expect(far == UsageError("unknown subcommand 'purge'", commandPath: ["attachkit", "cache"]))
  }

  @Test("reports an option given to a group before any subcommand")
  func optionOnGroup() {
    // Given an option where a subcommand belongs
    let error = usageError("cache", "--json", "stats")

    // Then it is unknown to the group
    #expect(error == UsageError("unknown option '--json'", commandPath: ["attachkit", "cache"]))
  }

  @Test("measures edit distance with swaps of neighbours as one edit")
  func editDistance() {
    // Given pairs of words
    // Then the distances count insertions, deletions, substitutions and swaps
    #expect(Suggestion.editDistance("json", "json") == 0)
    #expect(Suggestion.editDistance("jsn", "json") == 1)
    #expect(Suggestion.editDistance("fecth", "fetch") == 1)
    #expect(Suggestion.editDistance("kitten", "sitting") == 3)
    #expect(Suggestion.editDistance("", "abc") == 3)
  }
}
