import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit validate FILE...`: validates local files as iOS attachments.
enum ValidateCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "validate",
    abstract: "Check local files: is each an attachment iOS will accept?",
    discussion: """
      Decides from the bytes alone (never the file name) and names what a refused file really is; \
      an audio or video file is also opened and its first second decoded by FFmpeg in a sandboxed \
      worker (refused as undecodable when it does not start). \
      '-' reads a file from standard input (spooled to a temporary file in $TMPDIR, else /tmp, \
      removed after).
      """,
    examples: [
      "attachkit validate Samples/media/*", "attachkit validate --json banner.png | jq .outcome",
      "curl -s https://cdn.example.com/push/123 | attachkit validate -",
    ],
    sections: [CommonOptions.exitCodes])

  static let files = PositionalKey<[String]>.repeating(
    name: "file", valueName: "FILE", help: "Files to validate ('-': standard input, once).")

  static let arguments: [any ArgumentKey] =
    [CommonOptions.json, CommonOptions.quiet] + PipelineOptions.limits + [files]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    let files = arguments[Self.files]
    guard !files.isEmpty else {
      throw arguments.usageError("validate needs at least one FILE (or '-' for standard input)")
    }
    guard files.count(where: { $0 == "-" }) <= 1 else {
      throw arguments.usageError("standard input ('-') can be read once")
    }
    // The decode check as a miss has it: an audio or video file is accepted once FFmpeg starts
    // it, in a rescue worker (this executable itself).
    let validator = Validator(
      limits: try PipelineOptions.limits(from: arguments), decodeCheck: PipelineConfiguration().decodeCheck)
    let report = Report(json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet])
    for file in files {
      report.addLocalFile(file) { () throws(AttachmentError) in
        guard file == "-" else { return (try validator.validate(file: file), file) }
        // the spooled copy is gone once judged: the record has no path
        let validation = try StandardInput.withSpooledFile { path throws(AttachmentError) in
          try validator.validate(file: path)
        }
        return (validation, nil)
      }
    }
    return .finished(report.finish())
  }
}
