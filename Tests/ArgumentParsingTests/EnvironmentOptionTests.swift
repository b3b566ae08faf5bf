import ArgumentParsing
import Testing

/// Options and flags of a command with an environment prefix, read from a fixed table of
/// variables: the variable stands in for an option not given, the command line wins, and a
/// bad value names the variable.
@Suite("Options from the environment")
struct EnvironmentOptionTests {
  /// `tool run`: an option of each sort, under the prefix `TOOL_`.
  enum Run: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "run", abstract: "Runs.", environmentPrefix: "TOOL_")
    static let listen = OptionKey<String>.option(long: "listen", valueName: "ADDR:PORT", help: "Where.")
    static let count = OptionKey<Int>.integer(long: "max-count", bound: .positive, help: "How many.")
    static let size = OptionKey<Int64>.byteCount(long: "size", help: "How big.")
    static let verbose = FlagKey(long: "verbose", short: "v", help: "Say more.")
    static let arguments: [any ArgumentKey] = [listen, count, size, verbose]
  }

  /// `tool plain`: the same option without a prefix.
  enum Plain: ParsableCommand {
    static let configuration = CommandConfiguration(name: "plain", abstract: "No environment.")
    static let arguments: [any ArgumentKey] = [Run.count]
  }

  /// The root.
  enum Tool: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "tool", abstract: "A tool.", subcommands: [Run.self, Plain.self])
  }

  /// The arguments `words` run with, the environment being `variables`.
  private static func parse(_ words: [String], _ variables: [String: String]) throws -> ParsedArguments {
    let router = CommandRouter(root: Tool.self, environment: { variables[$0] })
    guard case .run(_, let arguments) = try router.parse(words) else { throw NotRun() }
    return arguments
  }

  @Test("a variable gives an option or flag the command line leaves out; the command line wins")
  func variablesStandIn() throws {
    let environment = [
      "TOOL_LISTEN": "0.0.0.0:9000", "TOOL_MAX_COUNT": "7", "TOOL_SIZE": "2KiB", "TOOL_VERBOSE": "Yes",
    ]
    let fromEnvironment = try Self.parse(["run"], environment)
    #expect(fromEnvironment[Run.listen] == "0.0.0.0:9000")
    #expect(try fromEnvironment[Run.count] == 7)
    #expect(try fromEnvironment[Run.size] == 2048)
    #expect(fromEnvironment[Run.verbose])
    let given = try Self.parse(["run", "--listen", "127.0.0.1:1", "--max-count=3"], environment)
    #expect(given[Run.listen] == "127.0.0.1:1")
    #expect(try given[Run.count] == 3)
    let off = try Self.parse(["run"], ["TOOL_VERBOSE": "off", "TOOL_LISTEN": ""])
    #expect(!off[Run.verbose])
    #expect(off[Run.listen] == nil)  // empty counts as unset
    #expect(try Self.parse(["run", "-v"], ["TOOL_VERBOSE": "0"])[Run.verbose])
    #expect(try Self.parse(["plain"], ["TOOL_MAX_COUNT": "7"])[Run.count] == nil)
  }

  @Test("a bad value names the variable, not the option; a given option's bad value names the option")
  func badValuesNameTheVariable() throws {
    let arguments = try Self.parse(["run"], ["TOOL_MAX_COUNT": "many", "TOOL_SIZE": "-1"])
    #expect(
      throws: UsageError(
        "TOOL_MAX_COUNT expects a positive whole number, got 'many'", commandPath: ["tool", "run"])
    ) {
      try arguments[Run.count]
    }
    #expect(
      throws: UsageError(
        "TOOL_SIZE expects a byte size such as 500, 10MB or 5MiB, got '-1'", commandPath: ["tool", "run"])
    ) {
      try arguments[Run.size]
    }
    let given = try Self.parse(["run", "--max-count", "none"], ["TOOL_MAX_COUNT": "many"])
    #expect(
      throws: UsageError(
        "--max-count expects a positive whole number, got 'none'", commandPath: ["tool", "run"])
    ) {
      try given[Run.count]
    }
    #expect(
      throws: UsageError(
        "TOOL_VERBOSE expects one of 1, true, yes, on, 0, false, no, off; got 'maybe'",
        commandPath: ["tool", "run"])
    ) {
      try Self.parse(["run"], ["TOOL_VERBOSE": "maybe"])
    }
  }

  @Test("help lists each option's variable under ENVIRONMENT; a command without a prefix has none")
  func help() throws {
    let router = CommandRouter(root: Tool.self, environment: { _ in nil })
    let page = try #require(router.helpText(for: ["tool", "run"]))
    #expect(page.contains("ENVIRONMENT:\n  Each option can also be set by an environment variable"))
    #expect(page.contains("\n  TOOL_LISTEN     --listen ADDR:PORT\n"))
    #expect(page.contains("\n  TOOL_MAX_COUNT  --max-count N\n"))
    #expect(page.hasSuffix("\n  TOOL_VERBOSE    --verbose"))
    #expect(try #require(router.helpText(for: ["tool", "plain"])).contains("ENVIRONMENT") == false)
    #expect(router.manPage().contains(".TP\n\\fBTOOL_MAX_COUNT\\fR\n\\-\\-max\\-count N\n"))
  }
}
