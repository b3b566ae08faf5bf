/// One command of a router's tree with the words that lead to it: what the shell completion
/// scripts and the manual page walk, so that both say what `--help` says.
struct CommandNode {
  /// The words that pick the command, root first: `["attachkit", "cache", "gc"]`.
  let path: [String]
  /// The command.
  let command: any ParsableCommand.Type

  /// The commands under this one, in help order; empty for a command that runs.
  var subcommands: [any ParsableCommand.Type] { command.configuration.subcommands }

  /// Whether this command groups others rather than running.
  var isGroup: Bool { !subcommands.isEmpty }

  /// Its options and flags as declared (none for a group, whose arguments are ignored).
  var options: [ArgumentSpec] { isGroup ? [] : command.specs.filter { !$0.isPositional } }

  /// Its positionals as declared (none for a group).
  var positionals: [ArgumentSpec] { isGroup ? [] : command.specs.filter(\.isPositional) }

  /// The path as one string, `attachkit cache gc`.
  var name: String { path.joined(separator: " ") }
}

extension CommandRouter {
  /// Every command of the tree, the root first, then each subtree in help order. A command
  /// that contains itself is not entered again (``problems`` reports it).
  var nodes: [CommandNode] {
    var found: [CommandNode] = []
    func visit(_ command: any ParsableCommand.Type, _ path: [String], _ ancestors: [ObjectIdentifier]) {
      guard !ancestors.contains(ObjectIdentifier(command)) else { return }
      found.append(CommandNode(path: path, command: command))
      for subcommand in command.configuration.subcommands {
        visit(subcommand, path + [subcommand.configuration.name], ancestors + [ObjectIdentifier(command)])
      }
    }
    visit(root, [root.configuration.name], [])
    return found
  }

  /// The long options every command at `path` understands without declaring them, as specs
  /// (`--version` on the root when it has a version, and `-h, --help`).
  func builtInSpecs(at path: [String]) -> [ArgumentSpec] {
    let help = ArgumentSpec.flag(long: "help", short: "h", help: HelpEntry.help.help)
    guard path.count == 1, root.configuration.version != nil else { return [help] }
    return [.flag(long: "version", help: HelpEntry.version.help), help]
  }
}

/// What a shell may offer for an option's value or a positional's word.
enum ValueCompletion: Equatable {
  /// Nothing to offer (a number, a URL).
  case none
  /// File names.
  case files
  /// Directory names.
  case directories
  /// These words.
  case choices([String])
}

extension ArgumentSpec {
  /// What a shell may offer for the value: a choice option's values, directories for a `DIR`,
  /// file names for a `FILE`, `OUT` or `*.json`, else nothing.
  var valueCompletion: ValueCompletion {
    if !choices.isEmpty { return .choices(choices) }
    if valueName.contains("DIR") { return .directories }
    if valueName.contains("FILE") || valueName.contains("OUT") || valueName.hasSuffix(".json") {
      return .files
    }
    return .none
  }

  /// The first sentence of the help text, for shells that show one short line per option.
  var summary: String {
    let sentence = help.split(separator: ". ", maxSplits: 1).first.map(String.init) ?? help
    return sentence.hasSuffix(".") ? String(sentence.dropLast()) : sentence
  }
}
