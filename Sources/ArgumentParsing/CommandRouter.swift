/// Turns a command line into a ``ParseOutcome``: finds the subcommand, then reads its arguments.
///
/// Pass the words after the program name (`CommandLine.arguments.dropFirst()`). Subcommand names
/// come first (`cache gc`); `-h`/`--help` anywhere before `--` asks for the help of the command
/// named so far; `help [COMMAND...]` does the same from any group; `--version` works on the root
/// when it has a ``CommandConfiguration/version``.
///
/// ```swift
/// do throws(UsageError) {
///   switch try CommandRouter(root: AttachKit.self).parse(CommandLine.arguments.dropFirst()) {
///   case .help(let text), .version(let text): print(text)
///   case .run(["attachkit", "fetch"], let arguments): try fetch(arguments)
///   case .run(let path, _): fatalError("no runner for \(path)")
///   }
/// } catch {
///   writeToStandardError(error.description)  // then exit(2)
/// }
/// ```
public struct CommandRouter: Sendable {
  /// The root command: the program itself.
  public let root: any ParsableCommand.Type
  /// The value of an environment variable, or `nil` when it is not set: what a command with a
  /// ``CommandConfiguration/environmentPrefix`` reads its options from.
  let environment: @Sendable (String) -> String?

  /// Makes a router for the tree under `root`. Nothing is checked here; see ``problems``.
  /// Options of commands with an ``CommandConfiguration/environmentPrefix`` are read from
  /// `environment` (the process's own, by default) when the command line leaves them out.
  public init(
    root: any ParsableCommand.Type, environment: (@Sendable (String) -> String?)? = nil
  ) {
    self.root = root
    self.environment = environment ?? EnvironmentDefaults.process
  }

  /// What `words` ask for. Throws ``UsageError`` for an unknown command or option, a missing
  /// command under a group, and every error of reading a command's arguments (a missing or
  /// misplaced value, a missing positional, an extra word).
  public func parse<Words: Sequence<String>>(_ words: Words) throws(UsageError) -> ParseOutcome {
    let words = Array(words)
    var command = root
    var path = [root.configuration.name]
    var index = 0
    while index < words.count, let next = subcommand(of: command, named: words[index]) {
      command = next
      path.append(next.configuration.name)
      index += 1
    }
    let rest = words[index...]
    let options = rest.prefix { $0 != "--" }
    if options.contains("--help") || options.contains("-h") {
      return .help(text: helpText(command, path))
    }
    if path.count == 1, let version = root.configuration.version, options.contains("--version") {
      return .version(text: version)
    }
    if command.configuration.subcommands.isEmpty {
      var reader = ArgumentReader(
        commandPath: path, specs: command.specs, builtInLongNames: builtIns(path))
      if let prefix = command.configuration.environmentPrefix {
        reader.environment = EnvironmentDefaults(prefix: prefix, lookUp: environment, commandPath: path)
      }
      return .run(commandPath: path, arguments: try reader.read(rest))
    }
    return try routeWithinGroup(command, path, rest)
  }

  /// The help page of the command at `path` (root first, as in ``UsageError/commandPath``),
  /// without a final newline, or `nil` when there is no such command.
  public func helpText(for path: [String]) -> String? {
    guard path.first == root.configuration.name else { return nil }
    var command = root
    for name in path.dropFirst() {
      guard let next = subcommand(of: command, named: name) else { return nil }
      command = next
    }
    return helpText(command, path)
  }

  /// What the words after a group's path ask for: `help ...`, or else an error, since a group
  /// cannot run and its first word names no subcommand.
  private func routeWithinGroup(
    _ group: any ParsableCommand.Type, _ path: [String], _ rest: ArraySlice<String>
  ) throws(UsageError) -> ParseOutcome {
    guard let first = rest.first else {
      let names = group.configuration.subcommands.map { $0.configuration.name }.joined(separator: ", ")
      throw UsageError("missing subcommand (one of: \(names))", commandPath: path)
    }
    if first == "help" { return try helpCommand(from: group, path, rest.dropFirst()) }
    if first.hasPrefix("-") && first != "-" {
      let reader = ArgumentReader(commandPath: path, specs: [], builtInLongNames: builtIns(path))
      throw reader.unknownOption(first.prefix { $0 != "=" }.description)
    }
    throw unknownCommand(first, in: group, path)
  }

  /// `help COMMAND...`: the help page of the command those names lead to from `group`.
  private func helpCommand(
    from group: any ParsableCommand.Type, _ groupPath: [String], _ names: ArraySlice<String>
  ) throws(UsageError) -> ParseOutcome {
    var command = group
    var path = groupPath
    for name in names where name != "--help" && name != "-h" {
      guard let next = subcommand(of: command, named: name) else {
        throw unknownCommand(name, in: command, path)
      }
      command = next
      path.append(name)
    }
    return .help(text: helpText(command, path))
  }

  /// The subcommand of `command` called `name`, if any.
  private func subcommand(of command: any ParsableCommand.Type, named name: String)
    -> (any ParsableCommand.Type)?
  {
    command.configuration.subcommands.first { $0.configuration.name == name }
  }

  /// The error for a word that names no subcommand of `command`, suggesting a near name.
  private func unknownCommand(_ name: String, in command: any ParsableCommand.Type, _ path: [String])
    -> UsageError
  {
    let subcommands = command.configuration.subcommands.map { $0.configuration.name }
    guard !subcommands.isEmpty else {
      return UsageError("'\(path.joined(separator: " "))' has no subcommand '\(name)'", commandPath: path)
    }
    let suggestion = Suggestion.closest(to: name, among: subcommands + ["help"])
    let hint = suggestion.map { " (did you mean '\($0)'?)" } ?? ""
    return UsageError("unknown subcommand '\(name)'\(hint)", commandPath: path)
  }

  /// The long options every command at `path` understands without declaring them.
  private func builtIns(_ path: [String]) -> [String] {
    path.count == 1 && root.configuration.version != nil ? ["help", "version"] : ["help"]
  }

  /// The help page of `command` at `path`.
  private func helpText(_ command: any ParsableCommand.Type, _ path: [String]) -> String {
    let version = path.count == 1 ? root.configuration.version : nil
    return HelpFormatter(command: command, commandPath: path, version: version).render()
  }
}
