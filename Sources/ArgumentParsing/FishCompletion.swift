/// Writes the fish completion script of a router's tree (see
/// ``CommandRouter/completionScript(for:)``): one `complete` line per subcommand, option and
/// positional, each under a condition on the command the typed words lead to.
struct FishCompletion {
  /// The tree to describe.
  let router: CommandRouter

  /// The whole script.
  var script: String {
    let program = router.root.configuration.name
    let helper = "__" + ShellQuote.identifier([program])
    let paths =
      router.nodes.dropFirst().map(\.name) + router.nodes.filter(\.isGroup).map { $0.name + " help" }
    var lines = [
      "# fish completion for \(program), written by '\(program) completion fish' from the same",
      "# declarations as '\(program) --help'. Save it as ~/.config/fish/completions/\(program).fish",
      "function \(helper)_command",
      "    set -l words (commandline -opc)",
      "    set -e words[1]",
      "    set -l command \(ShellQuote.single(program, fish: true))",
      "    for word in $words",
      "        switch \"$command $word\"",
      "            case \(paths.map { ShellQuote.single($0, fish: true) }.joined(separator: " "))",
      "                set command \"$command $word\"",
      "            case '*'",
      "                break",
      "        end",
      "    end",
      "    echo $command",
      "end",
      "function \(helper)_is",
      "    test (\(helper)_command) = \"$argv[1]\"",
      "end",
      "complete -c \(program) -f",
    ]
    for node in router.nodes { lines += completions(for: node, program: program, helper: helper) }
    return (lines + [""]).joined(separator: "\n")
  }

  /// The `complete` lines of one command (and, for a group, of its `help`).
  private func completions(for node: CommandNode, program: String, helper: String) -> [String] {
    let head = "complete -c \(program) -n \(condition(node.name, helper))"
    var lines = (node.options + router.builtInSpecs(at: node.path)).map { spec in
      var line = head + " -l \(spec.name)"
      if let short = spec.short { line += " -s \(short)" }
      if spec.kind == .option { line += " " + valueFlags(spec.valueCompletion) }
      return line + " -d " + ShellQuote.single(spec.summary, fish: true)
    }
    if node.isGroup {
      for subcommand in node.subcommands {
        let configuration = subcommand.configuration
        lines.append(
          head + " -a " + ShellQuote.single(configuration.name, fish: true) + " -d "
            + ShellQuote.single(configuration.abstract, fish: true))
      }
      lines.append(head + " -a help -d 'Show help for a subcommand'")
      let names = node.subcommands.map { $0.configuration.name }.joined(separator: " ")
      lines.append(
        "complete -c \(program) -n \(condition(node.name + " help", helper)) -a "
          + ShellQuote.single(names, fish: true))
      return lines
    }
    if let positional = node.positionals.map(\.valueCompletion).first(where: { $0 != .none }) {
      switch positional {
      case .files, .directories, .none: lines.append(head + " -F")
      case .choices(let words):
        lines.append(head + " -a " + ShellQuote.single(words.joined(separator: " "), fish: true))
      }
    }
    return lines
  }

  /// The `-n` condition that holds when the typed words lead to `name`.
  private func condition(_ name: String, _ helper: String) -> String {
    ShellQuote.single("\(helper)_is " + ShellQuote.single(name), fish: true)
  }

  /// The flags of an option's value: required, and what to offer for it.
  private func valueFlags(_ completion: ValueCompletion) -> String {
    switch completion {
    case .none: "-x"
    case .files: "-r -F"
    case .directories: "-x -a '(__fish_complete_directories)'"
    case .choices(let words): "-x -a " + ShellQuote.single(words.joined(separator: " "), fish: true)
    }
  }
}
