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
    subcommands: [
      FetchCommand.self, PrefetchCommand.self, ValidateCommand.self, RescueCommand.self, CacheCommand.self,
      ServeCommand.self, SignCommand.self,
    ],
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
  /// Every runnable command of the tree, by its words after `attachkit` (`"cache gc"`): read
  /// from ``configuration``'s subcommands, so a command is registered in one place.
  static var runnableCommands: [String: any RunnableCommand.Type] {
    var found: [String: any RunnableCommand.Type] = [:]
    func walk(_ command: any ParsableCommand.Type, words: [String]) {
      if let runnable = command as? any RunnableCommand.Type {
        found[words.joined(separator: " ")] = runnable
      }
      for child in command.configuration.subcommands {
        walk(child, words: words + [child.configuration.name])
      }
    }
    for child in configuration.subcommands { walk(child, words: [child.configuration.name]) }
    return found
  }
}
