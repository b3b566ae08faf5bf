/// Checks of the command tree's declarations, for a unit test to assert empty.
extension CommandRouter {
  /// Every mistake in the tree's declarations, one sentence each, or none.
  ///
  /// Reported: empty or duplicate command names; arguments declared on a group (they are
  /// ignored); argument names that are empty, hold `=` or spaces, start with `-`, or repeat;
  /// repeated short names; `help`/`-h` (and `version` on the root) taken from the built-ins;
  /// a repeating or optional positional after a repeating one (it could never get a word);
  /// a subcommand cycle.
  public var problems: [String] {
    problems(of: root, path: [root.configuration.name], ancestors: [])
  }

  /// The problems of `command` at `path` and of everything under it.
  private func problems(
    of command: any ParsableCommand.Type, path: [String], ancestors: [ObjectIdentifier]
  ) -> [String] {
    let where_ = "'\(path.joined(separator: " "))'"
    let configuration = command.configuration
    guard !ancestors.contains(ObjectIdentifier(command)) else { return ["\(where_) contains itself"] }
    var found: [String] = []
    let names = configuration.subcommands.map { $0.configuration.name }
    if path.count == 1 && configuration.name.isEmpty { found.append("the root command has an empty name") }
    if names.contains("") { found.append("\(where_) has a subcommand with an empty name") }
    for name in duplicates(names) { found.append("\(where_) has two subcommands named '\(name)'") }
    if configuration.subcommands.isEmpty {
      found += argumentProblems(command.specs, at: where_, isRoot: path.count == 1)
    } else if !command.arguments.isEmpty {
      found.append("\(where_) has subcommands, so its own arguments are ignored")
    }
    for subcommand in configuration.subcommands {
      found += problems(
        of: subcommand, path: path + [subcommand.configuration.name],
        ancestors: ancestors + [ObjectIdentifier(command)])
    }
    return found
  }

  /// The problems of one command's argument specs.
  private func argumentProblems(_ specs: [ArgumentSpec], at where_: String, isRoot: Bool) -> [String] {
    var found: [String] = []
    for spec in specs
    where spec.name.isEmpty || spec.name.hasPrefix("-") || spec.name.contains("=")
      || spec.name.contains(" ")
    {
      found.append("\(where_) declares an argument with the malformed name '\(spec.name)'")
    }
    for name in duplicates(specs.map(\.name)) { found.append("\(where_) declares '\(name)' twice") }
    for short in duplicates(specs.compactMap(\.short)) {
      found.append("\(where_) declares '-\(short)' twice")
    }
    let reserved = isRoot && root.configuration.version != nil ? ["help", "version"] : ["help"]
    for spec in specs where !spec.isPositional && reserved.contains(spec.name) {
      found.append("\(where_) declares '--\(spec.name)', which is built in")
    }
    if specs.contains(where: { $0.short == "h" }) {
      found.append("\(where_) declares '-h', which is built in")
    }
    var repeatingSeen = false
    for spec in specs {
      guard case .positional(let repeating, let optional) = spec.kind else { continue }
      if repeatingSeen && (repeating || optional) {
        found.append(
          "\(where_) declares '\(spec.name)' after a repeating positional, so it never gets a word")
      }
      repeatingSeen = repeatingSeen || repeating
    }
    return found
  }

  /// The elements that occur more than once in `items`, each once, in order of first repeat.
  private func duplicates<Item: Hashable>(_ items: [Item]) -> [Item] {
    var seen: Set<Item> = []
    var repeated: [Item] = []
    for item in items where !seen.insert(item).inserted && !repeated.contains(item) {
      repeated.append(item)
    }
    return repeated
  }
}
