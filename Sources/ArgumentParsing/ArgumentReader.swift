/// Reads the words after a command's name against its ``ArgumentSpec`` list.
///
/// `--name value`, `--name=value` and `-x value` set options (the last one given wins), `--name`
/// and `-x` set flags, `--` makes every later word a positional, and `-` is a positional.
/// Options may come before, between or after positionals. A bare word that starts with `-`
/// (a negative number, say) is taken for an option unless it follows `--`.
struct ArgumentReader {
  /// The command being read, root first, for error messages.
  let commandPath: [String]
  /// What the command declares.
  let specs: [ArgumentSpec]
  /// Long options the router handles itself (`help`, `version`), offered as suggestions only.
  let builtInLongNames: [String]
  /// Where options and flags not given take their values from, when the command has a prefix.
  var environment: EnvironmentDefaults? = nil

  /// Reads `words`. Throws ``UsageError`` on an unknown option, a flag given a value, an option
  /// missing its value, a missing positional, or a word no positional takes.
  func read(_ words: ArraySlice<String>) throws(UsageError) -> ParsedArguments {
    var flags: Set<String> = []
    var options: [String: [String]] = [:]
    var loose: [String] = []
    var remaining = words[...]
    var onlyPositionals = false
    while let word = remaining.popFirst() {
      if onlyPositionals || word == "-" || !word.hasPrefix("-") {
        loose.append(word)
      } else if word == "--" {
        onlyPositionals = true
      } else {
        let (spec, typed, inlineValue) = try lookUp(word)
        switch spec.kind {
        case .flag:
          guard inlineValue == nil else { throw error("\(typed) does not take a value") }
          flags.insert(spec.name)
        case .option:
          if let inlineValue {
            options[spec.name, default: []].append(inlineValue)
          } else {
            options[spec.name, default: []].append(try takeValue(for: typed, spec, from: &remaining))
          }
        case .positional:
          throw error("unknown option '\(typed)'")
        }
      }
    }
    let assigned = try PositionalAssignment(specs: specs.filter(\.isPositional), commandPath: commandPath)
      .assign(loose)
    var sources: [String: String] = [:]
    try environment?.fill(specs, flags: &flags, options: &options, sources: &sources)
    return ParsedArguments(
      commandPath: commandPath,
      declared: Dictionary(specs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }),
      flags: flags, options: options, positionalValues: assigned, environmentSources: sources)
  }

  /// The spec `word` names, the option as typed (without any `=value`), and the inline value.
  private func lookUp(_ word: String) throws(UsageError) -> (ArgumentSpec, String, String?) {
    if word.hasPrefix("--") {
      let body = word.dropFirst(2)
      let name = String(body.prefix { $0 != "=" })
      let inlineValue = body.count > name.count ? String(body.dropFirst(name.count + 1)) : nil
      let typed = "--" + name
      guard
        let spec = specs.first(where: { !$0.isPositional && ($0.name == name || $0.aliases.contains(name)) })
      else {
        throw unknownOption(typed)
      }
      return (spec, typed, inlineValue)
    }
    let letters = word.dropFirst()
    guard letters.count == 1, let letter = letters.first,
      let spec = specs.first(where: { $0.short == letter })
    else { throw unknownOption(word) }
    return (spec, word, nil)
  }

  /// The next word as the value of the option typed as `typed`, consuming it. Throws when there
  /// is no next word or it looks like an option rather than a value.
  private func takeValue(
    for typed: String, _ spec: ArgumentSpec, from remaining: inout ArraySlice<String>
  ) throws(UsageError) -> String {
    guard let next = remaining.first, Self.isValue(next) else {
      throw error("missing value for '\(typed)' (expected \(spec.valueName))")
    }
    remaining.removeFirst()
    return next
  }

  /// Whether a word after an option is its value: anything but an option-like word, where `-`
  /// (standard input) and negative numbers count as values.
  static func isValue(_ word: String) -> Bool {
    guard word.hasPrefix("-"), word != "-" else { return true }
    if case .value = NumberText.decimal(word) { return true }
    return false
  }

  /// The error for an option nobody declares, suggesting a near long name.
  func unknownOption(_ typed: String) -> UsageError {
    let longNames =
      specs.filter { !$0.isPositional }.map { "--" + $0.name } + builtInLongNames.map { "--" + $0 }
    let isSingleLetter = typed.count == 2 && !typed.hasPrefix("--")
    let suggestion = isSingleLetter ? nil : Suggestion.closest(to: typed, among: longNames)
    return error("unknown option '\(typed)'" + (suggestion.map { " (did you mean '\($0)'?)" } ?? ""))
  }

  /// A usage error about this command.
  private func error(_ message: String) -> UsageError {
    UsageError(message, commandPath: commandPath)
  }
}
