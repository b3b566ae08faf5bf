import Glibc

/// Where a command's options and flags take the values the command line leaves out, for a
/// command with a ``CommandConfiguration/environmentPrefix``.
struct EnvironmentDefaults {
  /// The prefix of every variable (`ATTACHKIT_`).
  let prefix: String
  /// The value of a variable, or `nil` when it is not set.
  let lookUp: @Sendable (String) -> String?
  /// The command being read, root first, for error messages.
  let commandPath: [String]

  /// The words a flag's variable may hold, by whether they set it.
  static let flagWords: [(word: String, isSet: Bool)] = [
    ("1", true), ("true", true), ("yes", true), ("on", true),
    ("0", false), ("false", false), ("no", false), ("off", false),
  ]

  /// Adds, for each option and flag of `specs` the command line did not give, the value of its
  /// variable when that is set and not empty, and records the variable in `sources`.
  /// Throws ``UsageError`` naming the variable when a flag's holds anything but the words of
  /// ``flagWords`` (options' values are checked when read, as given ones are).
  func fill(
    _ specs: [ArgumentSpec], flags: inout Set<String>, options: inout [String: [String]],
    sources: inout [String: String]
  ) throws(UsageError) {
    for spec in specs {
      let variable = spec.environmentVariable(prefix: prefix)
      guard let value = lookUp(variable), !value.isEmpty else { continue }
      switch spec.kind {
      case .option where options[spec.name] == nil:
        options[spec.name] = [value]
        sources[spec.name] = variable
      case .flag where !flags.contains(spec.name):
        guard let word = Self.flagWords.first(where: { $0.word == value.lowercased() }) else {
          let words = Self.flagWords.map(\.word).joined(separator: ", ")
          throw UsageError("\(variable) expects one of \(words); got '\(value)'", commandPath: commandPath)
        }
        if word.isSet { flags.insert(spec.name) }
        sources[spec.name] = variable
      case .option, .flag, .positional: continue
      }
    }
  }

  /// The process's own environment, read with `getenv` when asked.
  static let process: @Sendable (String) -> String? = { name in getenv(name).map { String(cString: $0) } }
}

extension ArgumentSpec {
  /// The variable an option or flag takes its value from under `prefix`: the long name in
  /// capitals, `-` as `_` (`ATTACHKIT_` and `--max-connections` give `ATTACHKIT_MAX_CONNECTIONS`).
  func environmentVariable(prefix: String) -> String {
    prefix + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
  }
}
