import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// Options and help sections several commands share, each declared once (the pipeline's own
/// options are ``PipelineOptions``, shared with the extension runner).
enum CommonOptions {
  static let json = FlagKey(long: "json", help: "Print one JSON object per input per line.")
  static let quiet = FlagKey(long: "quiet", short: "q", help: "Print no table or summary, only errors.")
  static let noATSWarning = FlagKey(
    long: "no-ats-warning",
    help:
      "Leave out the App Transport Security warning (\"ats: …\": an http:// URL, or TLS iOS refuses) of the table and the JSON lines, for apps that declare an ATS exception. The table otherwise says it once, with a count."
  )

  /// Exit codes, shown in every command's help.
  static let exitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    every input was accepted
        1    at least one input was rejected (its bytes are no acceptable attachment), none failed
        2    usage error: a bad option, an unreadable input file, or an input that is no
             URL (invalid_url: nothing can make it work; the other inputs still run)
        3    the cache directory is unusable
        4    at least one input failed: network, HTTP status, deadline, I/O, a URL refused
             by a policy before any fetch (outcome "failed" in --json)
        130  interrupted (Ctrl-C)
      """)

  /// Exit codes of the `cache` subcommands (they reject or fail no input).
  static let cacheExitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    done
        2    usage error (bad option)
        3    the cache directory is unusable
      """)

  /// Exit codes of commands that only print (`completion`, `man`).
  static let printingExitCodes = HelpSection(
    title: "EXIT CODES",
    body: """
        0    done
        2    usage error (bad option)
      """)

  /// Opens the pipeline the options describe, or prints why the cache is unusable and
  /// returns `nil` (the caller exits 3).
  static func openPipeline(_ arguments: ParsedArguments) throws(UsageError) -> AttachmentPipeline? {
    let configuration = try pipelineConfiguration(arguments)
    do {
      return try AttachmentPipeline(configuration: configuration)
    } catch {
      Terminal.error("attachkit: \(Terminal.safe(error.message))\n")
      return nil
    }
  }

  /// Checks the pipeline's object store (`--store`), when there is one, before any request.
  /// - Throws: ``UsageError`` naming the setting when the store cannot be used (exit 2).
  static func checkStore(_ pipeline: AttachmentPipeline, _ arguments: ParsedArguments) throws(UsageError) {
    do {
      try pipeline.checkStore()
    } catch {
      throw arguments.usageError(error.message)
    }
  }

  /// The pipeline configuration from the options (``PipelineOptions/all``), for a short
  /// command-line run: its automatic sweep runs inline, or the process would exit before a
  /// background one finished.
  static func pipelineConfiguration(_ arguments: ParsedArguments) throws(UsageError) -> PipelineConfiguration
  {
    var configuration = try PipelineOptions.configuration(from: arguments)
    configuration.cache.sweepsInBackground = false
    return configuration
  }
}

/// Exit statuses of the command line.
enum ExitCode: Int32 {
  /// Every input was accepted (or, with `fetch --fallback`, replaced).
  case success = 0
  /// At least one input was rejected (its bytes are no acceptable attachment), none failed.
  case someRejected = 1
  /// A usage error: a bad option or input file, reported before anything was answered; or an
  /// input that is no URL (`invalid_url`), which no retry can make work (it wins over the
  /// codes below).
  case usage = 2
  /// The cache directory is unusable.
  case cacheUnusable = 3
  /// At least one input failed (network, HTTP status, deadline, I/O, a URL refused before any
  /// fetch): whatever else was rejected, a failure wins, since trying again may help.
  case someFailed = 4
  /// Ctrl-C stopped the run.
  case interrupted = 130
}

/// A command that can run, in two phases so that nothing is done twice and no input is judged
/// before every option is.
protocol RunnableCommand: ParsableCommand {
  /// Parses every option and opens what the command needs (one pipeline for the whole run),
  /// synchronously, before any task or thread starts. Answers at once when it can (a cache
  /// hit, a maintenance call); otherwise returns the work still to do.
  /// - Throws: ``UsageError`` for any bad option or input, before anything was answered.
  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart
}

/// What ``RunnableCommand/start(_:)`` leaves: an answer, or work to run on a task.
enum CommandStart {
  /// Answered already, with this exit status.
  case finished(ExitCode)
  /// Work to run to completion; it returns the exit status.
  case run(@Sendable () async -> ExitCode)
}
