import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit rescue FILE --output OUT`: turns a local near-miss image, video or audio file into
/// an attachment.
enum RescueCommand: RunnableCommand {
  static let configuration = CommandConfiguration(
    name: "rescue",
    abstract: "Turn a local near-miss image, video or audio file into a valid attachment, and validate it.",
    discussion: """
      WebP, HEIC/HEIF and AVIF become JPEG (PNG with alpha, GIF when animated); an image over the byte \
      or pixel limit is downscaled, upright and in sRGB (libvips). A video over the duration limit is \
      trimmed by stream copy; H.264 in Matroska, MPEG-TS or AVI is re-wrapped in MP4; VP8, VP9, AV1 and \
      MPEG-4 part 2 video become H.264, and FLAC, Vorbis, Opus, ADPCM, DTS or TrueHD audio AAC-LC \
      (FFmpeg). A video that cannot be made playable before the deadline becomes a JPEG poster of its \
      first frame that is not nearly black (actions ["poster"]; --no-poster refuses it instead). A file \
      that is already acceptable is copied unchanged. Prints the result like validate, with a "rescued" object saying what was done.
      """,
    examples: [
      "attachkit rescue photo.heic --output photo.jpg", "attachkit rescue --json banner.webp -o out",
      "attachkit rescue clip.webm --output clip.mp4",
    ],
    sections: [CommonOptions.exitCodes])

  static let output = OptionKey<String>.option(
    long: "output", short: "o", valueName: "OUT",
    help: "Where the delivered file goes (required; replaced if it exists, removed on failure).")
  static let file = PositionalKey<String>.positional(
    name: "file", valueName: "FILE", help: "The image, video or audio file to rescue.")

  static let arguments: [any ArgumentKey] =
    [
      CommonOptions.json, CommonOptions.quiet, PipelineOptions.deadline, PipelineOptions.profile,
      PipelineOptions.noPoster,
    ]
    + PipelineOptions.limits + [output, file]

  static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
    guard let file = arguments[Self.file] else { throw arguments.usageError("rescue needs a FILE") }
    guard let output = arguments[Self.output] else {
      throw arguments.usageError("rescue needs --output OUT")
    }
    var configuration = PipelineConfiguration()
    configuration.limits = try PipelineOptions.limits(from: arguments)
    configuration.rescuers = StandardRescuers.make(
      limits: configuration.limits, poster: arguments[PipelineOptions.noPoster] ? nil : PosterConfiguration())
    // The profile's limits and rescuers (`android`: images only, JPEG or PNG ≤ 1 MB, 1024 px).
    configuration = try PipelineOptions.profile(from: arguments).applied(to: configuration)
    let deadline = ContinuousClock.now + (try PipelineOptions.deadline(from: arguments))
    let report = Report(json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet])
    report.addLocalFile(file, path: output) { [configuration] () throws(AttachmentError) in
      try deliver(file, to: output, configuration: configuration, deadline: deadline)
    }
    return .finished(report.finish())
  }

  /// Validates `file`; an accepted file is copied to `output`, a rescuable refusal rescued.
  private static func deliver(
    _ file: String, to output: String, configuration: PipelineConfiguration, deadline: ContinuousClock.Instant
  ) throws(AttachmentError) -> Validation {
    let validation = try configuration.rescuers.attachment(
      fromFile: file, rescuingInto: output, limits: configuration.limits, deadline: deadline)
    if validation.rescued == nil { try DeliveredFile.copy(file, to: output) }
    return validation
  }
}
