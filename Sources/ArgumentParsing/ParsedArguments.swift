/// The arguments of one command line, checked against the command's declared keys.
///
/// Read values with the keys they were declared with (see ``ArgumentKey``): `arguments[json]`
/// for a flag, `arguments[cacheDirectory]` for a text option, `try arguments[concurrency]` for
/// an option whose text is converted (it throws ``UsageError`` on a malformed value), and
/// `arguments[urls]` for a positional. Reading a key the command does not declare is a
/// programming error and stops the program, so a key left out of a command's list shows up in
/// the first test that runs it rather than as a silent default.
public struct ParsedArguments: Sendable, Equatable {
  /// The command these arguments belong to, root first: `["attachkit", "fetch"]`.
  public let commandPath: [String]
  /// The declarations, by name, that reads are checked against.
  let declared: [String: ArgumentSpec]
  /// The flags that were given (or set by their environment variable), by long name.
  let flags: Set<String>
  /// Every value given to each option, in command-line order, by long name.
  let options: [String: [String]]
  /// The words each positional took, by name.
  let positionalValues: [String: [String]]
  /// The environment variable each option or flag took its value from, by name, for those
  /// the command line did not give (see ``CommandConfiguration/environmentPrefix``).
  var environmentSources: [String: String] = [:]

  /// Whether the command declares `key` (its name, kind and help all as the key has them).
  /// Reading a key it does not declare stops the program; this asks without stopping.
  public func declares(_ key: some ArgumentKey) -> Bool {
    declared[key.spec.name] == key.spec
  }

  /// Whether the flag was given (on the command line, or by its environment variable).
  public subscript(key: FlagKey) -> Bool {
    requireDeclared(key)
    return flags.contains(key.spec.name)
  }

  /// The text of the option, the last one if it was given more than once, or `nil` if it was
  /// not given (on the command line, or by its environment variable).
  public subscript(key: OptionKey<String>) -> String? {
    values(of: key).last
  }

  /// The value of the option, converted from the last text given, or `nil` if it was not given.
  /// Throws ``UsageError`` when that text is no value of the key's type and bound; the message
  /// names the option (or the environment variable the text came from), says what it expects
  /// and quotes what it got.
  public subscript<Value>(key: OptionKey<Value>) -> Value? {
    get throws(UsageError) {
      requireDeclared(key)
      guard let text = options[key.spec.name]?.last else { return nil }
      switch key.convert(text, environmentSources[key.spec.name] ?? "--" + key.spec.name) {
      case .success(let value): return value
      case .failure(let invalid): throw usageError(invalid.message)
      }
    }
  }

  /// Every text given to the option, in order (empty if none): for options meant to be
  /// repeated, such as `--header`. An environment variable gives one text.
  public func values(of key: OptionKey<String>) -> [String] {
    requireDeclared(key)
    return options[key.spec.name] ?? []
  }

  /// The word the positional took, or `nil` for an optional one not given.
  public subscript(key: PositionalKey<String>) -> String? {
    requireDeclared(key)
    return positionalValues[key.spec.name]?.first
  }

  /// The words the repeating positional took, in order (empty for an optional one not given).
  public subscript(key: PositionalKey<[String]>) -> [String] {
    requireDeclared(key)
    return positionalValues[key.spec.name] ?? []
  }

  /// A ``UsageError`` about this command, for checks the declarations cannot express
  /// (two options that exclude each other, say). It is returned, not thrown.
  public func usageError(_ message: String) -> UsageError {
    UsageError(message, commandPath: commandPath)
  }

  /// Stops the program when the command does not declare `key`.
  private func requireDeclared(_ key: some ArgumentKey) {
    guard !declares(key) else { return }
    let command = commandPath.joined(separator: " ")
    let name = key.spec.name
    if declared[name] == nil {
      preconditionFailure("'\(command)' declares no argument named '\(name)'")
    }
    preconditionFailure("'\(command)' declares '\(name)' otherwise than the key read")
  }
}
