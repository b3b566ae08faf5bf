/// A command line that cannot be run as typed: an unknown option, a missing or malformed value.
///
/// Thrown by ``CommandRouter/parse(_:)`` and by the converting reads of ``ParsedArguments`` (so a
/// command's run code throws it too). The caller prints ``description`` to standard error and
/// exits with status 2. Compare on ``message`` in tests; it is written for people and states what
/// was expected and what was got.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong, in one line without the program name: `unknown option '--jsn'`.
  public let message: String
  /// The command the error concerns, root first: `["attachkit", "prefetch"]`.
  public let commandPath: [String]

  /// Makes an error about the command at `commandPath` (root first).
  public init(_ message: String, commandPath: [String]) {
    self.message = message
    self.commandPath = commandPath
  }

  /// Two lines for standard error: the message after the program name, then where to get help.
  ///
  /// ```
  /// attachkit: unknown option '--jsn' (did you mean '--json'?)
  /// Run 'attachkit prefetch --help' for usage.
  /// ```
  public var description: String {
    let program = commandPath.first ?? "command"
    let command = commandPath.isEmpty ? program : commandPath.joined(separator: " ")
    return "\(program): \(message)\nRun '\(command) --help' for usage."
  }
}
