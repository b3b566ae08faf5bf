import ArgumentParsing
import Testing

/// The generated help pages.
@Suite("Help text")
struct HelpTextTests {
  /// A command with a label too long for the help column and a long free-form line.
  enum Wide: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "wide", abstract: "Exercises wrapping.",
      sections: [
        HelpSection(
          title: "Exit codes",
          body: "  3    the deadline passed before every attachment was fetched, checked and stored, "
            + "which the caller may retry")
      ])
    static let arguments: [any ArgumentKey] = [
      OptionKey<String>.option(
        long: "a-rather-long-option-name", valueName: "WITH-A-LONG-VALUE",
        help: "Its help starts on the next line."),
      FlagKey(long: "quiet", short: "q", help: "Print nothing."),
    ]
  }

  @Test("lays out a whole page: overview, discussion, usage, arguments, options, examples, sections")
  func fetchPage() throws {
    // Given fetch's declarations
    // When its help page is generated
    let page = try #require(router.helpText(for: ["attachkit", "fetch"]))

    // Then it is exactly this
    let expected = """
      OVERVIEW: Downloads one attachment and reports what it is.

      The download goes to a private temporary file, is checked, and is moved into the
      cache.

      USAGE: attachkit fetch [--json] [--cache-dir DIR] [--deadline SECONDS]
                             [--no-cache] [--header NAME:VALUE] URL

      ARGUMENTS:
        URL                  The attachment's URL.

      OPTIONS:
        -j, --json           Print the result as one JSON object.
        -d, --cache-dir DIR  Where cached downloads live.
        --deadline SECONDS   Give up after this many seconds, counting every retry and
                             redirect, so that a slow server cannot hold the pipeline
                             up for longer than the caller is willing to wait.
        --no-cache           Neither read nor write the cache.
        --header NAME:VALUE  An extra request header; repeatable.
        -h, --help           Show help information.

      EXAMPLES:
        attachkit fetch --json https://example.com/a.png

      EXIT CODES:
        0    fetched and valid
        1    fetched but refused
        2    usage error
      """
    #expect(page == expected)
  }

  @Test("shows every option and positional of each command beside its help, in one column")
  func everyOptionListed() throws {
    for command in [Fetch.self, Prefetch.self, Validate.self, CacheGC.self, CacheClear.self]
      as [any ParsableCommand.Type]
    {
      // Given a command's page
      let path =
        command == CacheGC.self || command == CacheClear.self
        ? ["attachkit", "cache", command.configuration.name] : ["attachkit", command.configuration.name]
      let lines = try #require(router.helpText(for: path)).split(separator: "\n").map(String.init)

      // Then each declared argument has a line with its label and the first words of its help
      var columns: Set<Int> = []
      for spec in command.arguments.map(\.spec) {
        let label: String
        switch spec.kind {
        case .option: label = "--\(spec.name) \(spec.valueName)"
        case .flag: label = "--\(spec.name)"
        case .positional: label = spec.valueName
        }
        let firstWords = spec.help.split(separator: " ").prefix(3).joined(separator: " ")
        let line = lines.first { $0.hasSuffix(firstWords) || $0.contains(firstWords + " ") }
        let found = try #require(line, "no help line for \(label) in \(path)")
        #expect(found.contains(label))
        if let column = offset(of: firstWords, in: found) { columns.insert(column) }
      }
      // and the help texts start in a single column
      #expect(columns.count == 1, "help column differs in \(path): \(columns)")
    }
  }

  @Test("writes usage lines from the declarations")
  func usageLines() throws {
    // Given each command's page
    func usage(_ path: String...) throws -> String {
      let page = try #require(router.helpText(for: path))
      return try #require(page.split(separator: "\n").first { $0.hasPrefix("USAGE:") }).description
    }

    // Then optional things are bracketed, repeating ones end in ..., groups take <subcommand>
    #expect(try usage("attachkit") == "USAGE: attachkit <subcommand>")
    #expect(try usage("attachkit", "validate") == "USAGE: attachkit validate [--json] FILE...")
    #expect(try usage("attachkit", "cache") == "USAGE: attachkit cache <subcommand>")
    #expect(
      try usage("attachkit", "cache", "gc") == "USAGE: attachkit cache gc [--max-bytes N] [--max-age DAYS]")
    #expect(try usage("attachkit", "cache", "verify") == "USAGE: attachkit cache verify")
    let prefetch = try #require(router.helpText(for: ["attachkit", "prefetch"]))
    #expect(prefetch.contains("                          [FILE|-]\n"))
  }

  @Test("lists a group's subcommands with their abstracts, and --version on the root")
  func groupPages() throws {
    // Given the root's and cache's pages
    let root = try #require(router.helpText(for: ["attachkit"]))
    let cache = try #require(router.helpText(for: ["attachkit", "cache"]))

    // Then each subcommand is listed with its abstract, and how to get more help is said
    #expect(root.contains("\n  fetch       Downloads one attachment and reports what it is.\n"))
    #expect(root.contains("\n  cache       Inspects and trims the download cache.\n"))
    #expect(root.contains("\n  See 'attachkit help <subcommand>' for detailed help.\n"))
    #expect(root.contains("\n  --version   Show the version.\n  -h, --help  Show help information.\n"))
    #expect(cache.contains("\n  gc          Deletes the oldest entries until the cache fits.\n"))
    #expect(cache.contains("See 'attachkit cache help <subcommand>' for detailed help."))
    // and only the root offers --version
    #expect(!cache.contains("--version"))
    // and the root's free-form section comes last
    #expect(root.hasSuffix("EXIT CODES:\n  0  success\n  2  usage error"))
  }

  @Test("keeps every line within 80 columns and free of trailing spaces")
  func widthAndTrailingSpaces() throws {
    let paths = [
      ["attachkit"], ["attachkit", "fetch"], ["attachkit", "prefetch"], ["attachkit", "validate"],
      ["attachkit", "cache"], ["attachkit", "cache", "gc"],
    ]
    for path in paths {
      // Given a page
      let page = try #require(router.helpText(for: path))

      // Then no line is wider than 80 or ends in a space, and the page ends without a newline
      for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
        #expect(line.count <= 80, "too wide in \(path): \(line)")
        #expect(line.last != " ", "trailing space in \(path): \(line)")
      }
      #expect(!page.hasSuffix("\n"))
    }
  }

  @Test("puts the help of a label too wide for the column on the next line, and hangs long table rows")
  func wideLabelsAndSections() throws {
    // Given a command with a very long option
    let page = try #require(CommandRouter(root: Wide.self).helpText(for: ["wide"]))

    // Then that option's help starts on the next line, at the shared column
    #expect(
      page.contains(
        "  --a-rather-long-option-name WITH-A-LONG-VALUE\n"
          + "                              Its help starts on the next line.\n"))
    #expect(page.contains("  -q, --quiet                 Print nothing.\n"))
    // and a long exit-code row wraps under its text, not under its number
    #expect(
      page.hasSuffix(
        "EXIT CODES:\n"
          + "  3    the deadline passed before every attachment was fetched, checked and\n"
          + "       stored, which the caller may retry"))
  }

  /// Where `needle` first starts in `line`, in characters, or `nil`.
  private func offset(of needle: String, in line: String) -> Int? {
    let characters = Array(line)
    let wanted = Array(needle)
    guard characters.count >= wanted.count else { return nil }
    return (0...(characters.count - wanted.count)).first {
      Array(characters[$0..<($0 + wanted.count)]) == wanted
    }
  }
}
