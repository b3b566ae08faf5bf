import ArgumentParsing

/// `attachkit completion bash|zsh|fish`: prints the shell's completion script, written from
/// the same declarations as `--help`.
enum CompletionCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "completion",
    abstract: "Print the completion script for bash, zsh or fish.",
    discussion: """
      Completes every command, subcommand and option, choice values, and file or directory names \
      where an option takes one. Written from the same declarations as --help, so it never lags them.
      """,
    examples: [
      "source <(attachkit completion bash)",
      "attachkit completion bash > /usr/share/bash-completion/completions/attachkit",
      "attachkit completion zsh > \"${fpath[1]}/_attachkit\"",
      "attachkit completion fish > ~/.config/fish/completions/attachkit.fish",
    ],
    sections: [CommonOptions.printingExitCodes])

  static let shell = PositionalKey<String>.positional(
    name: "shell", valueName: "SHELL", help: "bash, zsh or fish.",
    choices: CompletionShell.allCases.map(\.rawValue))

  static let arguments: [any ArgumentKey] = [shell]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    guard let name = arguments[shell], let shell = CompletionShell(rawValue: name) else {
      throw arguments.usageError("completion needs a SHELL: bash, zsh or fish")
    }
    Terminal.out(CommandRouter(root: RootCommand.self).completionScript(for: shell))
    return .finished(.success)
  }
}
