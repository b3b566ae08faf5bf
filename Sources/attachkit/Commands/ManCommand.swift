import ArgumentParsing

/// `attachkit man`: prints the manual page, in roff, written from the same declarations as
/// `--help`.
enum ManCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "man",
    abstract: "Print the manual page (roff) of every command.",
    discussion: "Written from the same declarations as --help: every command, option and exit code.",
    examples: ["attachkit man | man -l -", "attachkit man > /usr/local/share/man/man1/attachkit.1"],
    sections: [CommonOptions.printingExitCodes])

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    Terminal.out(CommandRouter(root: RootCommand.self).manPage())
    return .finished(.success)
  }
}
