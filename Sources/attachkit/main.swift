// attachkit: the command line. Routes the words to a command, runs it, exits with its status.
// Synchronous on purpose: a cache hit answers before any task, thread or libcurl is started.
import ArgumentParsing
import AttachmentKit
import Dispatch
import Glibc

let router = CommandRouter(root: RootCommand.self)
// The one registry is RootCommand's tree of subcommands; each runnable leaf by its words.
let commands = RootCommand.runnableCommands

/// Runs a command's remaining work to completion from synchronous code.
func runToCompletion(_ work: @escaping @Sendable () async -> ExitCode) -> Int32 {
  final class Box: @unchecked Sendable { var status: Int32 = 0 }
  let box = Box()
  let done = DispatchSemaphore(value: 0)
  Task {
    box.status = await work().rawValue
    done.signal()
  }
  done.wait()
  return box.status
}

func main() -> Int32 {
  _ = RunClock.start  // the summary's wall time counts from here
  // A reader that goes away (`| head`) must not kill the run: every command then finishes
  // quietly with the status of its inputs, as one that loaded libcurl (which ignores SIGPIPE)
  // always did. Output to the closed pipe is dropped (`Terminal`).
  signal(SIGPIPE, SIG_IGN)
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
      switch try command.start(arguments) {
      case .finished(let status): return status.rawValue
      case .run(let work): return runToCompletion(work)
      }
    }
  } catch {
    Terminal.error(Terminal.safeLines(error.description) + "\n")
    return ExitCode.usage.rawValue
  }
}

// Started as a rescue worker (by this same binary, for a rescue), it is one and nothing else.
RescueWorkers.runIfRequested()
let status = main()
// A run whose rescue workers lacked a sandbox layer says so, once (serve refuses to start instead).
let missingLayers = RescueWorkers.missingSandboxLayers()
if !missingLayers.isEmpty { Terminal.error(SandboxText.warning(missingLayers)) }
// Its rescue workers exit with it, counted in its own resource use (GNU time's peak memory).
RescueWorkers.finishIdleWorkers()
exit(status)
