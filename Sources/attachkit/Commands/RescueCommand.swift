import ArgumentParsing
import AttachmentKit
import Glibc
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
      that is already acceptable is copied unchanged. Prints the result like validate, with a "rescued" object saying what was done. \
      '-' reads the file from standard input (spooled to a temporary file in $TMPDIR, else /tmp, removed after).
      """,
    examples: [
      "attachkit rescue photo.heic --output photo.jpg", "attachkit rescue --json banner.webp -o out/",
      "attachkit rescue clip.webm --output clip.mp4",
      "curl -s https://cdn.example.com/banner.webp | attachkit rescue - -o banner.jpg",
    ],
    sections: [CommonOptions.exitCodes])

  static let output = OptionKey<String>.option(
    long: "output", short: "o", valueName: "OUT",
    help:
      "Where the delivered file goes (required; replaced if it exists, removed on failure). When OUT is a directory, the file goes into it named after FILE with the canonical extension, as fetch -o DIR names a URL's (photos/banner.webp gives banner.jpg; '-' gives attachment.jpg)."
  )
  static let file = PositionalKey<String>.positional(
    name: "file", valueName: "FILE", help: "The image, video or audio file to rescue ('-': standard input).")

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
    let timeout = try PipelineOptions.deadline(from: arguments)
    let report = Report(json: arguments[CommonOptions.json], quiet: arguments[CommonOptions.quiet])
    // Ctrl-C cancels the rescue as it cancels a fetch: its worker is killed at once, what it
    // wrote is removed, and the command exits 130.
    let interrupt = SignalWatcher()
    defer { interrupt.stop() }
    let delivery = Delivery(
      input: file, output: output, intoDirectory: DeliveredFile.isDirectory(output),
      configuration: configuration, timeout: timeout, isCancelled: { interrupt.hasFired })
    report.addLocalFile(file) { () throws(AttachmentError) in
      guard file == "-" else { return try delivery.deliver(file) }
      return try StandardInput.withSpooledFile { path throws(AttachmentError) in try delivery.deliver(path) }
    }
    return .finished(report.finish(interrupted: interrupt.hasFired))
  }

  /// One rescue: where its file goes and what it must meet.
  private struct Delivery {
    /// The input as given (a path, or `-`): what a file in a directory is named after.
    let input: String
    /// `--output` as given.
    let output: String
    /// Whether ``output`` is a directory the file goes into.
    let intoDirectory: Bool
    /// The limits and rescuers.
    let configuration: PipelineConfiguration
    /// The deadline, from when the file is there to read.
    let timeout: Duration
    /// Says the command was interrupted (Ctrl-C).
    let isCancelled: @Sendable () -> Bool

    /// Validates `file`; an accepted file is copied, a rescuable refusal rescued, to
    /// ``output`` or, in a directory, to a file in flight moved to its name once its type is
    /// known. Returns the validation and where the delivered file is.
    func deliver(_ file: String) throws(AttachmentError) -> (validation: Validation, path: String?) {
      let deadline = ContinuousClock.now + timeout
      let target = intoDirectory ? DeliveredFile.temporaryPath(in: output) : output
      let validation = try configuration.rescuers.attachment(
        fromFile: file, rescuingInto: target, limits: configuration.limits, deadline: deadline,
        isCancelled: isCancelled, decodeCheck: configuration.decodeCheck)
      if validation.rescued == nil { try DeliveredFile.copy(file, to: target) }
      if isCancelled() {
        // Interrupted after the work was done: nothing is delivered, as for a fetch.
        unlink(target)
        throw AttachmentError(.cancelled, "Interrupted (Ctrl-C) before the file was delivered.")
      }
      guard intoDirectory else { return (validation, output) }
      let name = DeliveredFile.name(forFile: input, fileExtension: validation.fileExtension)
      let path = (output.hasSuffix("/") ? output : output + "/") + name
      try DeliveredFile.move(target, to: path)
      return (validation, path)
    }
  }
}
