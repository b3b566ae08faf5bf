import ArgumentParsing
import Testing

/// The shell completion scripts and the manual page, as text, for the test tree: every
/// command's declared options in its own part, choice values, and roff escaping. The shells
/// themselves load attachkit's scripts in `Tests/CLITests/CompletionCLITests.swift`.
@Suite("Completion scripts and manual page")
struct GeneratedScriptTests {
  /// `pick SHELL`: a positional with choices.
  enum Pick: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "pick", abstract: "Picks a shell.",
      discussion: ".starts with a dot, holds a back\\slash and an ellipsis …")
    static let shell = PositionalKey<String>.positional(
      name: "shell", help: "Which one.", choices: ["bash", "zsh", "fish"])
    static let arguments: [any ArgumentKey] = [shell]
  }

  /// The root of a one-command tree.
  enum Root: ParsableCommand {
    static let configuration = CommandConfiguration(
      name: "tool", abstract: "A tool.", subcommands: [Pick.self])
  }

  @Test("a positional with choices takes only them; anything else is a usage error listing them")
  func positionalChoices() throws {
    let tool = CommandRouter(root: Root.self)
    guard case .run(_, let arguments) = try tool.parse(["pick", "zsh"]) else { throw NotRun() }
    #expect(arguments[Pick.shell] == "zsh")
    #expect(
      throws: UsageError(
        "SHELL expects one of bash, zsh, fish; got 'zhs' (did you mean 'zsh'?)",
        commandPath: ["tool", "pick"])
    ) {
      try tool.parse(["pick", "zhs"])
    }
  }

  /// The part of `script` from the line holding `start` to the next line holding `end`.
  private static func part(of script: String, from start: String, to end: String) -> String {
    let lines = script.split(separator: "\n", omittingEmptySubsequences: false)
    guard let first = lines.firstIndex(where: { $0.contains(start) }) else { return "" }
    let last = lines[(first + 1)...].firstIndex { $0.contains(end) } ?? lines.endIndex
    return lines[first..<last].joined(separator: "\n")
  }

  @Test("bash: each command's arm offers its own options, its choice values, directories for DIR")
  func bash() {
    let script = router.completionScript(for: .bash)
    #expect(script.contains("complete -F _attachkit attachkit"))
    let fetch = Self.part(of: script, from: "    'attachkit fetch')", to: "      ;;")
    for word in ["--json", "-j", "--cache-dir", "-d", "--deadline", "--no-cache", "--header", "--help", "-h"]
    {
      #expect(fetch.contains(word), "\(word)")
    }
    #expect(!fetch.contains("--concurrency"))
    #expect(fetch.contains("'--cache-dir' | '-d') _attachkit_offer \"$cur\" directories;"))
    let prefetch = Self.part(of: script, from: "    'attachkit prefetch')", to: "      ;;")
    #expect(prefetch.contains("'--format') _attachkit_offer \"$cur\" words 'text json';"))
    let cache = Self.part(of: script, from: "    'attachkit cache')", to: "      ;;")
    #expect(cache.contains("'stats verify gc clear help --help -h'"))
    let root = Self.part(of: script, from: "    'attachkit')", to: "      ;;")
    #expect(root.contains("--version"))
  }

  @Test("zsh and fish: every option of every command, under that command")
  func zshAndFish() {
    let zsh = router.completionScript(for: .zsh)
    let fish = router.completionScript(for: .fish)
    #expect(zsh.hasPrefix("#compdef attachkit\n"))
    #expect(
      zsh.contains(
        "    ('attachkit cache gc') _arguments -s : '--max-bytes[The size to trim the cache to]:N: '"))
    #expect(zsh.contains("'--header[An extra request header; repeatable]:NAME\\:VALUE: '"))
    #expect(zsh.contains("'(-d --cache-dir)'{-d,--cache-dir}'[Where cached downloads live]:DIR:_files -/'"))
    #expect(
      fish.contains(
        "complete -c attachkit -n '__attachkit_is \\'attachkit fetch\\'' -l cache-dir -s d -x -a '(__fish_complete_directories)' -d 'Where cached downloads live'"
      ))
    #expect(
      fish.contains(
        "complete -c attachkit -n '__attachkit_is \\'attachkit prefetch\\'' -l format -x -a 'text json'"))
    #expect(
      fish.contains(
        "complete -c attachkit -n '__attachkit_is \\'attachkit cache\\'' -a 'gc' -d 'Deletes the oldest entries until the cache fits.'"
      ))
    #expect(fish.contains("complete -c attachkit -n '__attachkit_is \\'attachkit validate\\'' -F"))
  }

  @Test("the manual: a subsection per command with every option, and text roff cannot misread")
  func manual() {
    let page = router.manPage()
    #expect(page.hasPrefix(".TH \"ATTACHKIT\" 1 \"\" \"attachkit 0.9.0 (test)\"\n"))
    for command in [
      "fetch", "prefetch", "validate", "cache", "cache stats", "cache verify", "cache gc", "cache clear",
    ] {
      #expect(page.contains(".SS \"attachkit \(command)\"\n"), "\(command)")
    }
    let gc = Self.part(of: page, from: ".SS \"attachkit cache gc\"", to: ".SS ")
    #expect(gc.contains("\\fB\\-\\-max\\-bytes\\fR \\fIN\\fR"))
    #expect(gc.contains("\\fB\\-\\-max\\-age\\fR \\fIDAYS\\fR"))
    #expect(gc.contains("\\fB\\-h\\fR, \\fB\\-\\-help\\fR"))
    let pick = CommandRouter(root: Root.self).manPage()
    #expect(pick.contains("\n\\&.starts with a dot, holds a back\\eslash and an ellipsis ...\n"))
    #expect(pick.contains("\\fISHELL\\fR"))
  }
}
