/// What the command line asks for, once routed: run a command, print help, or print the version.
///
/// Help and the version go to standard output with exit status 0; a ``UsageError`` (thrown,
/// not returned) goes to standard error with status 2.
public enum ParseOutcome: Sendable, Equatable {
  /// Run the command at `commandPath` (root first, `["attachkit", "cache", "stats"]`) with these
  /// arguments, already checked against its declaration.
  case run(commandPath: [String], arguments: ParsedArguments)
  /// Print this help page with `print(_:)` (it does not end with a newline).
  case help(text: String)
  /// Print this version text with `print(_:)` (the root's ``CommandConfiguration/version``).
  case version(text: String)
}
