/// The arguments of one command line, checked against the command's ``ArgumentSpec`` list.
///
/// Look values up by the names they were declared with. Asking for a name the command does not
/// declare (or declares as another kind) is a programming error and stops the program, so a
/// typo in a lookup shows up in the first test that runs it rather than as a silent default.
/// The numeric accessors in the extensions throw ``UsageError`` on a malformed value.
public struct ParsedArguments: Sendable, Equatable {
  /// The command these arguments belong to, root first: `["attachkit", "fetch"]`.
  public let commandPath: [String]
  /// The declarations, by name, that lookups are checked against.
  let declared: [String: ArgumentSpec.Kind]
  /// The flags that were given, by long name.
  let flags: Set<String>
  /// Every value given to each option, in command-line order, by long name.
  let options: [String: [String]]
  /// The words each positional took, by name.
  let positionalValues: [String: [String]]

  /// Whether the flag `--long` was given. Stops the program if no such flag is declared.
  public func flag(_ long: String) -> Bool {
    requireDeclared(long, as: "flag") { $0 == .flag }
    return flags.contains(long)
  }

  /// The value of the option `--long`, the last one if it was given more than once, or `nil`.
  /// Stops the program if no such option is declared.
  public func string(_ long: String) -> String? {
    strings(long).last
  }

  /// Every value given to the option `--long`, in order (empty if none): for options meant to
  /// be repeated, such as `--header`. Stops the program if no such option is declared.
  public func strings(_ long: String) -> [String] {
    requireDeclared(long, as: "option") { $0 == .option }
    return options[long] ?? []
  }

  /// The words the positional `name` took: one for a plain positional, any number for a
  /// repeating one, none for an optional one not given. Stops the program if it is not declared.
  public func positionals(_ name: String) -> [String] {
    requireDeclared(name, as: "positional") { if case .positional = $0 { true } else { false } }
    return positionalValues[name] ?? []
  }

  /// The word the positional `name` took, or `nil` for an optional one not given.
  /// Stops the program if it is not declared.
  public func positional(_ name: String) -> String? {
    positionals(name).first
  }

  /// A ``UsageError`` about this command, for checks the declarations cannot express
  /// (two options that exclude each other, say). It is returned, not thrown.
  public func usageError(_ message: String) -> UsageError {
    UsageError(message, commandPath: commandPath)
  }

  /// Stops the program when `name` is not declared with a kind that `matches` accepts.
  private func requireDeclared(_ name: String, as kind: String, _ matches: (ArgumentSpec.Kind) -> Bool) {
    guard let found = declared[name], matches(found) else {
      let command = commandPath.joined(separator: " ")
      preconditionFailure("'\(command)' declares no \(kind) named '\(name)'")
    }
  }
}
