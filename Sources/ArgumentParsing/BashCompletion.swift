/// Writes the bash completion script of a router's tree (see
/// ``CommandRouter/completionScript(for:)``).
///
/// The script finds the command from the subcommand words typed so far, then offers the value
/// the previous word's option takes, else that command's options (when the word starts with
/// `-`), else its subcommands or what its positionals take.
struct BashCompletion {
  /// The tree to describe.
  let router: CommandRouter

  /// The whole script.
  var script: String {
    let program = router.root.configuration.name
    let function = "_" + ShellQuote.identifier([program])
    var lines = [
      "# bash completion for \(program), written by '\(program) completion bash' from the same",
      "# declarations as '\(program) --help'. Load it with: source <(\(program) completion bash)",
      "\(function)_offer() {",
      "  case \"$2\" in",
      "    words) mapfile -t COMPREPLY < <(compgen -W \"$3\" -- \"$1\") ;;",
      "    files) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$1\") ;;",
      "    directories) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- \"$1\") ;;",
      "  esac",
      "}",
      "\(function)() {",
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" command=\(ShellQuote.single(program)) i",
      "  ((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"",
      "  for ((i = 1; i < COMP_CWORD; i++)); do",
      "    case \"$command ${COMP_WORDS[i]}\" in",
      "      \(commandPatterns) command=\"$command ${COMP_WORDS[i]}\" ;;",
      "      *) break ;;",
      "    esac",
      "  done",
      "  COMPREPLY=()",
      "  case \"$command\" in",
    ]
    for node in router.nodes { lines += cases(for: node, offer: function + "_offer") }
    lines += ["  esac", "}", "complete -F \(function) \(program)", ""]
    return lines.joined(separator: "\n")
  }

  /// Every path below the root, and each group's `help`, as one `case` pattern list.
  private var commandPatterns: String {
    let paths =
      router.nodes.dropFirst().map(\.name) + router.nodes.filter(\.isGroup).map { $0.name + " help" }
    return paths.map { ShellQuote.single($0) }.joined(separator: " | ") + ")"
  }

  /// The `case` arms for one command (and, for a group, for its `help`).
  private func cases(for node: CommandNode, offer: String) -> [String] {
    let options = node.options + router.builtInSpecs(at: node.path)
    let optionWords = options.flatMap { spec in ["--" + spec.name] + (spec.short.map { ["-\($0)"] } ?? []) }
    var lines = ["    \(ShellQuote.single(node.name)))"]
    if node.isGroup {
      let names = node.subcommands.map { $0.configuration.name }
      let words = (names + ["help"] + optionWords).joined(separator: " ")
      lines += ["      \(offer) \"$cur\" words \(ShellQuote.single(words))", "      ;;"]
      lines += ["    \(ShellQuote.single(node.name + " help")))"]
      lines += [
        "      \(offer) \"$cur\" words \(ShellQuote.single(names.joined(separator: " ")))", "      ;;",
      ]
      return lines
    }
    let valued = options.filter { $0.kind == .option }
    if !valued.isEmpty {
      lines.append("      case \"$prev\" in")
      for spec in valued {
        let names = (["--" + spec.name] + (spec.short.map { ["-\($0)"] } ?? [])).map { ShellQuote.single($0) }
        lines.append(
          "        \(names.joined(separator: " | "))) \(offerCall(spec.valueCompletion, offer)) return ;;")
      }
      lines.append("      esac")
    }
    let words = ShellQuote.single(optionWords.joined(separator: " "))
    lines.append("      if [[ \"$cur\" == -* ]]; then \(offer) \"$cur\" words \(words); return; fi")
    let positional = node.positionals.map(\.valueCompletion).first { $0 != .none } ?? .none
    if positional != .none { lines.append("      \(offerCall(positional, offer))") }
    lines.append("      ;;")
    return lines
  }

  /// The call that offers `completion` for the current word, ending with `;`.
  private func offerCall(_ completion: ValueCompletion, _ offer: String) -> String {
    switch completion {
    case .none: ""
    case .files: "\(offer) \"$cur\" files;"
    case .directories: "\(offer) \"$cur\" directories;"
    case .choices(let words): "\(offer) \"$cur\" words \(ShellQuote.single(words.joined(separator: " ")));"
    }
  }
}
