import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit validate FILE...`: validates local files as iOS attachments.
enum ValidateCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "validate",
    abstract: "Check local files: is each an attachment iOS will accept?",
    discussion: "Decides from the bytes alone (never the file name) and names what a refused file really is.",
    examples: ["attachkit validate Samples/media/*", "attachkit validate --json banner.png | jq .outcome"],
    sections: [CommonOptions.exitCodes])

  static let files = PositionalKey<[String]>.repeating(
    name: "file", valueName: "FILE", help: "Files to validate.")

  static let arguments: [any ArgumentKey] =
    [CommonOptions.json, CommonOptions.quiet] + PipelineOptions.limits + [files]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    let files = arguments[Self.files]
    guard !files.isEmpty else { throw arguments.usageError("validate needs at least one FILE") }
    let validator = Validator(limits: try PipelineOptions.limits(from: arguments))
    let report = Report(json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet])
    for file in files {
      report.addLocalFile(file, path: file) { () throws(AttachmentError) in
        try validator.validate(file: file)
      }
    }
    return .finished(report.finish())
  }
}
