import ArgumentParsing
import Testing

/// ``CommandRouter/problems``: mistakes in the declarations, caught by a unit test.
@Suite("Declaration problems")
struct ProblemsTests {
  /// A root whose version makes `--version` built in, with a clashing leaf and a clashing group.
  enum Broken: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "broken", abstract: "Declares everything wrongly.", version: "1",
      subcommands: [Clashing.self, Clashing.self, Group.self])
  }

  /// Clashing names, built-ins taken, and positionals that could never fill.
  enum Clashing: ParsableCommand {
    static let configuration = CommandConfiguration(name: "clash", abstract: "Clashes.")
    static let arguments: [any ArgumentKey] = [
      FlagKey(long: "json", short: "j", help: ""),
      OptionKey<String>.option(long: "json", help: ""),
      FlagKey(long: "jobs", short: "j", help: ""),
      FlagKey(long: "help", help: ""),
      FlagKey(long: "quiet", short: "h", help: ""),
      OptionKey<String>.option(long: "--dir", help: ""),
      OptionKey<String>.option(long: "a=b", help: ""),
      PositionalKey<[String]>.repeating(name: "files", help: ""),
      PositionalKey<String>.positional(name: "more", help: "", optional: true),
      PositionalKey<String>.positional(name: "last", help: ""),
    ]
  }

  /// A group that also declares arguments, and a subcommand without a name.
  enum Group: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "group", abstract: "Groups.", subcommands: [Nameless.self])
    static let arguments: [any ArgumentKey] = [FlagKey(long: "json", help: "")]
  }

  /// A command with an empty name.
  enum Nameless: ParsableCommand {
    static let configuration = CommandConfiguration(name: "", abstract: "")
  }

  /// A group that contains itself.
  enum Loop: ParsableCommand {
    static let configuration = CommandConfiguration(name: "loop", abstract: "", subcommands: [Loop.self])
  }

  @Test("finds no problems in a sound tree")
  func soundTree() {
    // Given the attachkit-shaped tree
    // Then it has no problems
    #expect(router.problems.isEmpty)
  }

  @Test("reports each sort of mistake once, with where it is")
  func brokenTree() {
    // Given a tree with every sort of mistake
    let problems = CommandRouter(root: Broken.self).problems

    // Then each is reported, in tree order, the twice-listed subcommand's each time it appears
    let clash = [
      "'broken clash' declares an argument with the malformed name '--dir'",
      "'broken clash' declares an argument with the malformed name 'a=b'",
      "'broken clash' declares 'json' twice",
      "'broken clash' declares '-j' twice",
      "'broken clash' declares '--help', which is built in",
      "'broken clash' declares '-h', which is built in",
      "'broken clash' declares 'more' after a repeating positional, so it never gets a word",
    ]
    let group = [
      "'broken group' has a subcommand with an empty name",
      "'broken group' has subcommands, so its own arguments are ignored",
    ]
    #expect(problems == ["'broken' has two subcommands named 'clash'"] + clash + clash + group)
  }

  @Test("reports a subcommand cycle instead of looping")
  func cycle() {
    // Given a group that contains itself
    // Then the cycle is reported
    #expect(CommandRouter(root: Loop.self).problems == ["'loop loop' contains itself"])
  }

  @Test("reserves --version only on a root that has a version")
  func versionReserved() throws {
    // Given a root leaf that declares --version but has no version of its own
    enum Tool: ParsableCommand {
      static let configuration = CommandConfiguration(name: "tool", abstract: "")
      static let version = FlagKey(long: "version", help: "Print the version.")
      static let arguments: [any ArgumentKey] = [version]
    }

    // Then that is fine, and the flag parses as declared
    let tool = CommandRouter(root: Tool.self)
    #expect(tool.problems.isEmpty)
    #expect(try tool.parse(["--version"]).arguments?[Tool.version] == true)
  }
}
