import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit completion bash|zsh|fish` and `attachkit man`, checked against `--help`: every
/// command and every option its help page lists is completed by bash and fish (asked as a
/// user's TAB would ask) and documented in its subsection of the manual; each script loads in
/// its shell. A shell or groff that is not installed skips its part with a `SKIPPED:` line.
@Suite("attachkit completion and man", .serialized, .threadOfItsOwn)
struct CompletionCLITests {
  /// A command as its help page shows it: the words after `attachkit`, and its long options
  /// (or, for a group, its subcommands).
  struct HelpedCommand {
    let words: [String]
    let options: [String]
    let subcommands: [String]
  }

  /// The rows of one section of a help page (`OPTIONS:`, `SUBCOMMANDS:`): each row's label.
  private static func labels(in page: String, section: String) -> [String] {
    let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(of: Substring(section)) else { return [] }
    return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { line in
      guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }  // not a continuation
      return line.dropFirst(2).components(separatedBy: "  ").first
    }
  }

  /// Every command reachable from the root's help, with what its help page lists.
  private static func commands(under words: [String] = []) async throws -> [HelpedCommand] {
    let page = try await CLI.run(["help"] + words).stdout
    let options = labels(in: page, section: "OPTIONS:").flatMap { label in
      label.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
        .filter { $0.hasPrefix("--") }
    }
    let subcommands = labels(in: page, section: "SUBCOMMANDS:").compactMap { $0.split(separator: " ").first }
      .map(String.init)
    var found = [HelpedCommand(words: words, options: options, subcommands: subcommands)]
    for subcommand in subcommands { found += try await commands(under: words + [subcommand]) }
    return found
  }

  /// Whether `program` is installed; prints a `SKIPPED:` line when it is not.
  private static func installed(_ program: String, for part: String) -> Bool {
    let path = "/usr/bin/" + program
    if FileManager.default.isExecutableFile(atPath: path) { return true }
    print("SKIPPED: \(part): \(program) is not installed (scripts/install-deps.sh installs it)")
    return false
  }

  /// A file holding what `attachkit arguments` prints.
  private static func saved(_ arguments: [String], in scratch: Scratch, as name: String) async throws
    -> String
  {
    let result = try await CLI.run(arguments)
    #expect(result.status == 0, "\(result.stderr)")
    let path = scratch.path + "/" + name
    try writeTestFile(Data(result.stdout.utf8), to: path)
    return path
  }

  @Test("the tree as help shows it: every command, including completion and man")
  func treeFromHelp() async throws {
    let names = try await Self.commands().map { $0.words.joined(separator: " ") }
    for name in ["fetch", "prefetch", "validate", "cache gc", "serve", "sign", "completion", "man"] {
      #expect(names.contains(name), "\(names)")
    }
    let fetch = try #require(try await Self.commands(under: ["fetch"]).first)
    #expect(fetch.options.contains("--output") && fetch.options.contains("--cache-dir"), "\(fetch.options)")
  }

  @Test("bash: sources cleanly; TAB after each command offers every option its help lists")
  func bash() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let script = try await Self.saved(["completion", "bash"], in: scratch, as: "attachkit.bash")
    let syntax = try await CLI.run(program: "/bin/bash", ["-n", script])
    #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    let commands = try await Self.commands()
    // One bash asks every question: the words typed, then what TAB would offer, one line each.
    var questions =
      "set -u\nsource \(script)\nask() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _attachkit; "
    questions += "echo \"${COMPREPLY[*]}\"; }\n"
    for command in commands {
      let typed = (["attachkit"] + command.words).map { "'\($0)'" }.joined(separator: " ")
      questions += "ask \(typed) '--'\nask \(typed) ''\n"
    }
    let answers = try await CLI.run(program: "/bin/bash", ["-c", questions])
    #expect(answers.status == 0 && answers.stderr.isEmpty, "\(answers.stderr)")
    let lines = answers.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count >= commands.count * 2)
    for (index, command) in commands.enumerated() where index * 2 + 1 < lines.count {
      let options = Set(lines[index * 2].split(separator: " ").map(String.init))
      let words = Set(lines[index * 2 + 1].split(separator: " ").map(String.init))
      #expect(Set(command.options).isSubset(of: options), "\(command.words): \(options)")
      #expect(Set(command.subcommands).isSubset(of: words), "\(command.words): \(words)")
    }
  }

  @Test("fish: loads; TAB after each command offers every option its help lists")
  func fish() async throws {
    guard Self.installed("fish", for: "fish completion") else { return }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let script = try await Self.saved(["completion", "fish"], in: scratch, as: "attachkit.fish")
    let syntax = try await CLI.run(program: "/usr/bin/fish", ["--no-execute", script])
    #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    let commands = try await Self.commands()
    var questions = "source \(script)\n"
    for command in commands {
      let typed = (["attachkit"] + command.words).joined(separator: " ")
      for suffix in [" --", " "] {  // each answer: one candidate a line, then @@
        questions += "complete -C '\(typed)\(suffix)' | string replace -r '\\t.*' ''\necho @@\n"
      }
    }
    let answers = try await CLI.run(program: "/usr/bin/fish", ["--no-config", "-c", questions])
    #expect(answers.status == 0 && answers.stderr.isEmpty, "\(answers.stderr)")
    let blocks = answers.stdout.components(separatedBy: "@@\n").map {
      Set($0.split(separator: "\n").map(String.init))
    }
    #expect(blocks.count >= commands.count * 2)
    for (index, command) in commands.enumerated() where index * 2 + 1 < blocks.count {
      let offered = blocks[index * 2]
      let words = blocks[index * 2 + 1]
      #expect(Set(command.options).isSubset(of: offered), "\(command.words): \(offered)")
      #expect(Set(command.subcommands).isSubset(of: words), "\(command.words): \(words)")
    }
  }

  @Test("zsh: the script parses and compinit loads it as attachkit's completion")
  func zsh() async throws {
    guard Self.installed("zsh", for: "zsh completion") else { return }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let script = try await Self.saved(["completion", "zsh"], in: scratch, as: "_attachkit")
    let syntax = try await CLI.run(program: "/usr/bin/zsh", ["-n", script])
    #expect(syntax.status == 0 && syntax.stderr.isEmpty, "\(syntax.stderr)")
    let load =
      "autoload -U compinit && compinit -u -D && source \(script) && print -r -- ${_comps[attachkit]}"
    let loaded = try await CLI.run(program: "/usr/bin/zsh", ["-f", "-c", load])
    #expect(loaded.status == 0 && loaded.stderr.isEmpty, "\(loaded.stderr)")
    #expect(loaded.stdout == "_attachkit\n")
    let text = try String(contentsOfFile: script, encoding: .utf8)
    for command in try await Self.commands() where command.subcommands.isEmpty {
      let arm =
        text.split(separator: "\n").first {
          $0.hasPrefix("    ('attachkit \(command.words.joined(separator: " "))')")
        } ?? ""
      for option in command.options { #expect(arm.contains(option), "\(command.words) \(option)") }
    }
  }

  @Test(
    "man: groff renders it without a warning; each command's subsection lists every option its help lists")
  func manual() async throws {
    guard Self.installed("groff", for: "the manual page") else { return }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let page = try await Self.saved(["man"], in: scratch, as: "attachkit.1")
    let rendered = try await CLI.run(
      program: "/usr/bin/groff", ["-man", "-Tascii", "-ww", "-rLL=250n", "-P", "-cbou", page])
    #expect(rendered.status == 0 && rendered.stderr.isEmpty, "\(rendered.stderr)")
    let text = rendered.stdout
    #expect(text.contains("NAME") && text.contains("COMMANDS") && text.contains("EXIT CODES"))
    let commands = try await Self.commands()
    let headings = commands.dropFirst().map { "\n   attachkit " + $0.words.joined(separator: " ") + "\n" }
    for (index, command) in commands.dropFirst().enumerated() {
      guard let start = text.range(of: headings[index]) else {
        Issue.record("no subsection for \(command.words)")
        continue
      }
      let end =
        headings.dropFirst(index + 1).compactMap {
          text.range(of: $0, range: start.upperBound..<text.endIndex)?.lowerBound
        }.min() ?? text.endIndex
      let subsection = text[start.upperBound..<end]
      for option in command.options { #expect(subsection.contains(option), "\(command.words) \(option)") }
    }
  }
}
