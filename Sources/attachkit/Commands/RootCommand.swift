import ArgumentParsing

/// `attachkit`: the root of the command tree.
enum RootCommand: ParsableCommand {
  static let version = "0.1.0"

  static let configuration = CommandConfiguration(
    name: "attachkit",
    abstract: "Fetch, validate and cache iOS rich-notification attachments.",
    discussion: """
      Prefetch a push campaign's media before sending, validate a folder of assets, and \
      inspect or maintain the cache. Every request has an absolute deadline; every failure \
      has a stable code (see --json).
      """,
    version: "attachkit \(version)",
    subcommands: tree.map(\.type),
    examples: [
      "attachkit prefetch campaign.txt",
      "attachkit fetch --json https://cdn.example.com/push/123",
      "attachkit validate assets/*",
      "attachkit cache verify",
      "attachkit serve --listen 127.0.0.1:8080 --key-file keys",
    ],
    sections: [CommonOptions.exitCodes])
}

extension RootCommand {
  /// A node of the command tree: a command that runs, or a group of them.
  enum Node {
    case command(any RunnableCommand.Type)
    case group(any ParsableCommand.Type, [any RunnableCommand.Type])

    /// The node's type, as the parser's tree holds it.
    var type: any ParsableCommand.Type {
      switch self {
      case .command(let command): command
      case .group(let group, _): group
      }
    }
  }

  /// The one registry of commands, in the order help lists them. Typed, so that finding the
  /// command to run needs no dynamic cast (a first conformance lookup scans the binary's
  /// conformance tables, about 0.1 ms of a 2 ms cache hit).
  static let tree: [Node] = [
    .command(FetchCommand.self), .command(PrefetchCommand.self), .command(ValidateCommand.self),
    .command(RescueCommand.self), .group(CacheCommand.self, CacheCommand.commands),
    .command(ServeCommand.self),
    .command(SandboxCommand.self), .command(SignCommand.self), .command(CompletionCommand.self),
    .command(ManCommand.self),
  ]

  /// Every runnable command by its words after `attachkit` (`"cache gc"`), from ``tree``.
  static var runnableCommands: [String: any RunnableCommand.Type] {
    var found: [String: any RunnableCommand.Type] = [:]
    for node in tree {
      switch node {
      case .command(let command): found[command.configuration.name] = command
      case .group(let group, let commands):
        for command in commands {
          found["\(group.configuration.name) \(command.configuration.name)"] = command
        }
      }
    }
    return found
  }
}
