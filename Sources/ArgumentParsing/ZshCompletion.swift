/// Writes the zsh completion script of a router's tree (see
/// ``CommandRouter/completionScript(for:)``): a `#compdef` function that finds the command from
/// the subcommand words typed so far and hands the rest to `_arguments` with that command's
/// options, each with its one-line summary.
struct ZshCompletion {
  /// The tree to describe.
  let router: CommandRouter

  /// The whole script.
  var script: String {
    let program = router.root.configuration.name
    let function = "_" + ShellQuote.identifier([program])
    var lines = [
      "#compdef \(program)",
      "# zsh completion for \(program), written by '\(program) completion zsh' from the same",
      "# declarations as '\(program) --help'. Save it as _\(program) in a directory of $fpath.",
      "\(function)() {",
      "  local command=\(ShellQuote.single(program))",
      "  local -i i=2",
      "  while ((i < CURRENT)); do",
      "    case \"$command ${words[i]}\" in",
      "      (\(commandPatterns)) command=\"$command ${words[i]}\"; ((i++)) ;;",
      "      (*) break ;;",
      "    esac",
      "  done",
      "  words=(\"${(@)words[i-1,-1]}\")",
      "  ((CURRENT -= i - 2))",
      "  case \"$command\" in",
    ]
    for node in router.nodes { lines += cases(for: node) }
    lines += [
      "  esac", "}", "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then",
      "  \(function) \"$@\"", "else", "  compdef \(function) \(program)", "fi", "",
    ]
    return lines.joined(separator: "\n")
  }

  /// Every path below the root, and each group's `help`, as one `case` pattern list.
  private var commandPatterns: String {
    let paths =
      router.nodes.dropFirst().map(\.name) + router.nodes.filter(\.isGroup).map { $0.name + " help" }
    return paths.map { ShellQuote.single($0) }.joined(separator: "|")
  }

  /// The `case` arms for one command (and, for a group, for its `help`).
  private func cases(for node: CommandNode) -> [String] {
    var specs = (node.options + router.builtInSpecs(at: node.path)).map(optionSpec)
    if node.isGroup {
      let names = node.subcommands.map { $0.configuration.name }
      specs.append(ShellQuote.single("1:command:(\((names + ["help"]).joined(separator: " ")))"))
      let helpArm = ShellQuote.single("1:command:(\(names.joined(separator: " ")))")
      return [
        "    (\(ShellQuote.single(node.name))) _arguments -s : \(specs.joined(separator: " ")) ;;",
        "    (\(ShellQuote.single(node.name + " help"))) _arguments : \(helpArm) ;;",
      ]
    }
    for (index, positional) in node.positionals.enumerated() {
      let position = positional.isRepeating ? "*" : "\(index + 1)"
      specs.append(
        ShellQuote.single(
          "\(position):\(Self.message(positional.valueName)):\(action(positional.valueCompletion))"))
    }
    return ["    (\(ShellQuote.single(node.name))) _arguments -s : \(specs.joined(separator: " ")) ;;"]
  }

  /// The `_arguments` spec of an option or flag: `(-q --quiet)'{-q,--quiet}'[summary]`, and
  /// for an option `:VALUE:action`.
  private func optionSpec(_ spec: ArgumentSpec) -> String {
    let description = "[" + Self.bracketSafe(spec.summary) + "]"
    let value = spec.kind == .option ? ":\(Self.message(spec.valueName)):\(action(spec.valueCompletion))" : ""
    guard let short = spec.short else {
      return ShellQuote.single("--\(spec.name)\(description)\(value)")
    }
    return ShellQuote.single("(-\(short) --\(spec.name))") + "{-\(short),--\(spec.name)}"
      + ShellQuote.single(description + value)
  }

  /// The `_arguments` action that offers `completion`.
  private func action(_ completion: ValueCompletion) -> String {
    switch completion {
    case .none: " "
    case .files: "_files"
    case .directories: "_files -/"
    case .choices(let words): "(\(words.joined(separator: " ")))"
    }
  }

  /// A value's name fit for the message part of an `_arguments` spec: colons escaped.
  private static func message(_ text: String) -> String {
    text.replacing(":", with: "\\:")
  }

  /// Help text fit inside `[...]` of an `_arguments` spec: brackets become parentheses.
  private static func bracketSafe(_ text: String) -> String {
    String(
      text.map { character -> Character in
        switch character {
        case "[": "("
        case "]": ")"
        default: character
        }
      })
  }
}

extension ArgumentSpec {
  /// Whether this is a positional that takes every word left.
  var isRepeating: Bool {
    if case .positional(let repeating, _) = kind { return repeating }
    return false
  }
}
