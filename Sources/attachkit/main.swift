// attachkit: the command line. Routes the words to a command, runs it, exits with its status.
import ArgumentParsing
import Glibc

let router = CommandRouter(root: RootCommand.self)
let commands: [String: any RunnableCommand.Type] = [
  "fetch": FetchCommand.self,
  "prefetch": PrefetchCommand.self,
  "validate": ValidateCommand.self,
  "cache stats": CacheCommand.Stats.self,
  "cache verify": CacheCommand.Verify.self,
  "cache gc": CacheCommand.GC.self,
  "cache clear": CacheCommand.Clear.self,
]

func main() async -> Int32 {
  do throws(UsageError) {
    switch try router.parse(CommandLine.arguments.dropFirst()) {
    case .help(let text):
      Terminal.out(text + "\n")
      return ExitCode.success.rawValue
    case .version(let text):
      Terminal.out(text + "\n")
      return ExitCode.success.rawValue
    case .run(let path, let arguments):
      guard let command = commands[path.dropFirst().joined(separator: " ")] else {
        Terminal.out((router.helpText(for: path) ?? "") + "\n")
        return ExitCode.usage.rawValue
      }
      return try await command.run(arguments).rawValue
    }
  } catch {
    Terminal.error(error.description + "\n")
    return ExitCode.usage.rawValue
  }
}

exit(await main())
