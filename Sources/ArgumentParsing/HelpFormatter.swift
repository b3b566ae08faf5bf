/// Writes a command's help page from its configuration and argument specs, 80 columns wide.
///
/// The page has, in order and each only when it has content: OVERVIEW, the discussion, USAGE,
/// ARGUMENTS, OPTIONS (always, for `-h, --help`), SUBCOMMANDS, EXAMPLES, ENVIRONMENT (with an
/// ``CommandConfiguration/environmentPrefix``), then the command's own
/// ``HelpSection``s. Lists share one column for their help text.
struct HelpFormatter {
  /// The command the page is for.
  let command: any ParsableCommand.Type
  /// Its path, root first: `["attachkit", "cache", "gc"]`.
  let commandPath: [String]
  /// The version text when the command is the root and has one, which adds `--version`.
  let version: String?

  /// The whole page, without a newline at the end (as `print` adds one).
  func render() -> String {
    let configuration = command.configuration
    let subcommands = configuration.subcommands
    let specs = subcommands.isEmpty ? command.specs : []
    let arguments = specs.filter(\.isPositional).map(HelpEntry.init)
    let options = specs.filter { !$0.isPositional }.map(HelpEntry.init) + builtInOptions
    let commands = subcommands.map {
      HelpEntry(label: $0.configuration.name, help: $0.configuration.abstract)
    }
    let column = HelpEntry.column(for: arguments + options + commands)
    var blocks: [[String]] = []
    if !configuration.abstract.isEmpty {
      blocks.append(TextWrapping.paragraphs(configuration.abstract, firstPrefix: "OVERVIEW: ", indent: "  "))
    }
    if !configuration.discussion.isEmpty {
      blocks.append(TextWrapping.preformatted(configuration.discussion))
    }
    blocks.append(usageLines(specs: specs, isGroup: !subcommands.isEmpty))
    if !arguments.isEmpty { blocks.append(["ARGUMENTS:"] + arguments.flatMap { $0.lines(column: column) }) }
    blocks.append(["OPTIONS:"] + options.flatMap { $0.lines(column: column) })
    if !commands.isEmpty {
      let pointer = "  See '\(commandPath.joined(separator: " ")) help <subcommand>' for detailed help."
      blocks.append(["SUBCOMMANDS:"] + commands.flatMap { $0.lines(column: column) } + ["", pointer])
    }
    if !configuration.examples.isEmpty {
      blocks.append(["EXAMPLES:"] + configuration.examples.flatMap { TextWrapping.commandLine("  " + $0) })
    }
    if let prefix = configuration.environmentPrefix, !specs.isEmpty {
      blocks.append(EnvironmentHelp.block(specs, prefix: prefix))
    }
    for section in configuration.sections {
      blocks.append(["\(section.title.uppercased()):"] + TextWrapping.preformatted(section.body))
    }
    return blocks.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
  }

  /// `-h, --help`, and `--version` when the page is the root's and it has a version.
  private var builtInOptions: [HelpEntry] {
    version == nil ? [.help] : [.version, .help]
  }

  /// The USAGE line: the command path then each argument's token, wrapped under the first token.
  private func usageLines(specs: [ArgumentSpec], isGroup: Bool) -> [String] {
    let prefix = "USAGE: " + commandPath.joined(separator: " ")
    let tokens =
      isGroup
      ? ["<subcommand>"]
      : specs.filter { !$0.isPositional }.map(\.usageToken)
        + specs.filter(\.isPositional).map(\.usageToken)
    let hang = prefix.count + 1 <= TextWrapping.width / 2 ? prefix.count + 1 : 2
    return TextWrapping.fill(tokens, firstPrefix: prefix + " ", indent: String(repeating: " ", count: hang))
  }
}
