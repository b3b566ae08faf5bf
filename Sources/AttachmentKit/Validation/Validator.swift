import Glibc

/// Decides from the bytes alone whether a file is an attachment iOS will accept.
///
/// Never trusts the URL, the file name or a `Content-Type` header. The structural probes
/// decide the type; libmagic names what a refused file is, and is neither loaded nor asked for
/// a file that is accepted. Pure over the file it is given: no network, no cache. With a
/// ``decodeCheck``, an audio or video file that passes every structural check is also opened
/// and started by FFmpeg in a rescue worker (``DecodeCheckConfiguration``).
public struct Validator: Sendable {
  /// The limits files must meet.
  public var limits: ValidationLimits

  /// The decode check an accepted audio or video file passes last, or `nil` (the default
  /// here; a pipeline's is ``PipelineConfiguration/decodeCheck``): none, the probes alone judge.
  public var decodeCheck: DecodeCheckConfiguration?

  /// Makes a validator with limits and, when given, a decode check.
  public init(limits: ValidationLimits = ValidationLimits(), decodeCheck: DecodeCheckConfiguration? = nil) {
    self.limits = limits
    self.decodeCheck = decodeCheck
  }

  /// Validates a complete file on disk.
  ///
  /// Reads at most the first 64 KiB (after an ID3v2 tag) to identify it, then walks its
  /// structure piecewise; memory does not grow with the file's size, and the work is bounded
  /// in proportion to it (see `ByteReader`). The codec of every audio and video stream is
  /// judged against `CodecTable`.
  /// - Parameters:
  ///   - path: the file to check.
  ///   - sha256: the file's digest when the caller already has it (a download computes it
  ///     while streaming); otherwise the file is hashed here.
  ///   - deadline: the absolute instant by which the answer is due; the structural walk
  ///     checks it (and the task's cancellation) as it goes. Nil: no deadline.
  /// - Returns: the ``Validation`` of an accepted file.
  /// - Throws: ``AttachmentError`` with `empty` (no bytes, or no playable samples),
  ///   `unsupported_type` (with `detected`),
  ///   `unsupported_codec` (with `detected` naming the codec), `truncated`, `too_large`,
  ///   `too_long`, `unknown_duration`, `too_many_pixels`, `undecodable` (with a
  ///   ``decodeCheck``), `deadline_exceeded`, `cancelled`, or `io_error` when the file cannot be
  ///   read.
  public func validate(
    file path: String, sha256: String? = nil, deadline: ContinuousClock.Instant? = nil
  ) throws(AttachmentError) -> Validation {
    do {
      return try judge(file: path, sha256: sha256, signal: StopSignal(deadline: deadline), sniffed: nil)
    } catch {
      throw error.error
    }
  }

  /// Validates a complete file, as ``validate(file:sha256:deadline:)`` does, refusing it with
  /// what validation measured before it refused (the input of a rescue).
  /// - Throws: a ``Refusal`` whose error is one that ``validate(file:sha256:deadline:)`` throws.
  public func judge(
    file path: String, sha256: String? = nil, deadline: ContinuousClock.Instant? = nil
  ) throws(Refusal) -> Validation {
    try judge(file: path, sha256: sha256, signal: StopSignal(deadline: deadline), sniffed: nil)
  }

  /// Validates a downloaded file, continuing from what the streaming sniffer proved of its
  /// first bytes (`sniffed`) instead of identifying them again; `nil` identifies here. The walk
  /// stops when `signal` says so (its deadline, or a cancellation raised from another thread:
  /// the pipeline runs this off Swift's cooperative pool). An identification made here is
  /// counted in `tally`.
  func judge(
    file path: String, sha256: String?, signal: StopSignal, sniffed: SniffVerdict?,
    tally: IdentificationTally? = nil
  ) throws(Refusal) -> Validation {
    if let reason = signal.reason {
      throw Refusal(
        StopSignal.error(for: reason, while: "before the file was checked"), facts: MediaFacts(bytes: 0))
    }
    let file: FileBytes
    do throws(FileBytesError) {
      file = try FileBytes(path: path, digesting: sha256 == nil)
    } catch {
      throw Refusal(
        AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)): \(error.reason)."),
        facts: MediaFacts(bytes: 0))
    }
    let size = file.count
    guard size > 0 else {
      throw Refusal(AttachmentError(.empty, "The file is empty (0 bytes)."), facts: MediaFacts(bytes: 0))
    }
    return try validate(file, path: path, sha256: sha256, signal: signal, sniffed: sniffed, tally: tally)
  }

  /// What the first bytes show (the sniffing window, read once through `naming`): the format
  /// and the header's dimensions.
  /// - Throws: the refusal of bytes no probe identifies, named by libmagic.
  private func identify(_ naming: inout MagicNaming, tally: IdentificationTally?, bytes: Int64)
    throws(Refusal)
    -> SniffVerdict
  {
    let window = naming.window()
    tally?.record()
    guard let identified = window.withUnsafeBytes({ MediaProbe.identify(prefix: $0) }) else {
      throw Refusal(SniffWindow.refusal(detected: naming.name()), facts: MediaFacts(bytes: bytes))
    }
    return SniffVerdict(
      format: identified.format, detected: nil, width: identified.width, height: identified.height)
  }

  /// Refuses an image over its byte limit, or whose header is over the pixel budget, before its
  /// structure is walked: the walk inflates a PNG's image data, a cost its refusal need not pay.
  private func refuseBeforeWalk(_ header: SniffVerdict, bytes: Int64) throws(Refusal) {
    guard let type = header.format.row.mediaType, type.category == .image,
      let violation = limits.violation(
        type: type, bytes: bytes, durationSeconds: nil, width: header.width, height: header.height),
      violation.code == .tooManyPixels || violation.code == .tooLarge
    else { return }
    throw Refusal(
      violation, format: type.mime, category: .image,
      facts: MediaFacts(bytes: bytes, width: header.width, height: header.height))
  }

  /// The checks of a non-empty `file`: its format (from `sniffed`, or identified here), its
  /// structure, type, limits and codecs. A refusal found after the structural walk carries what
  /// the walk measured.
  private func validate(
    _ file: FileBytes, path: String, sha256: String?, signal: StopSignal, sniffed: SniffVerdict?,
    tally: IdentificationTally?
  ) throws(Refusal) -> Validation {
    let size = file.count
    // libmagic names a refused file (it is asked at most once, and only on a refusal path).
    var naming = MagicNaming(file: file, known: sniffed?.detected)
    let header = if let sniffed { sniffed } else { try identify(&naming, tally: tally, bytes: size) }
    let format = header.format
    try refuseBeforeWalk(header, bytes: size)
    let report: ProbeReport
    do {
      report = try inspect(file, as: format, signal: signal, naming: &naming)
    } catch {
      throw Refusal(error, category: format.row.mediaType?.category, facts: MediaFacts(bytes: size))
    }
    let facts = MediaFacts(
      bytes: size, width: report.width, height: report.height, durationSeconds: report.durationSeconds,
      codecs: Self.codecs(of: report.streams), frames: report.frames)
    let type: MediaType
    let codecWarnings: [String]
    do {
      type = try Classifier.mediaType(for: report, detected: naming.name()).get()
    } catch {
      throw Refusal(error, category: format.row.mediaType?.category, facts: facts)
    }
    do {
      try check(type: type, report: report, size: size)
      codecWarnings = try CodecCheck.judge(report.streams, type: type).get()
    } catch {
      throw Refusal(
        error, format: error.detected ?? type.mime, category: type.category, type: type, facts: facts)
    }
    let detected = naming.asked

    let digest: String
    if let sha256 {
      digest = sha256
    } else if let hashed = file.digest?.finish(reading: file) {
      digest = hashed  // mostly from the bytes the checks above read
    } else {
      throw Refusal(
        AttachmentError(.ioError, "Cannot read \(Redaction.escapeControlCharacters(path)) to hash it."),
        facts: facts)
    }
    let validation = Validation(
      type: type, detectedMIME: detected, bytes: size, sha256: digest, width: report.width,
      height: report.height, frames: report.frames, durationSeconds: report.durationSeconds,
      codecs: facts.codecs,
      warnings: warnings(type: type, detected: detected) + codecWarnings + report.notes)
    return try decoded(validation, path: path, signal: signal)
  }

  /// `validation` once the ``decodeCheck`` (when there is one and the file needs it) has seen
  /// a decoder start the file at `path`, with its warning when the check could not run.
  /// - Throws: the check's refusal (`undecodable`, `too_many_pixels`), or the stop.
  private func decoded(_ validation: Validation, path: String, signal: StopSignal) throws(Refusal)
    -> Validation
  {
    guard let decodeCheck, DecodeCheckConfiguration.applies(to: validation) else { return validation }
    var checked = validation
    do {
      let warning = try decodeCheck.check(
        path: path, validation: validation, deadline: signal.deadline,
        isCancelled: { signal.reason == .cancelled })
      if let warning { checked.warnings.append(warning) }
    } catch {
      throw Refusal(error, validation: validation)
    }
    return checked
  }

  /// The complete-file walk of `file` as `format`, its failures as the refusals they are.
  private func inspect(
    _ file: FileBytes, as format: ProbedFormat, signal: StopSignal, naming: inout MagicNaming
  ) throws(AttachmentError) -> ProbeReport {
    switch MediaProbe.inspect(file: file, as: format, signal: signal) {
    case .success(let complete): return complete
    case .failure(.interrupted(let reason)):
      var error = StopSignal.error(for: reason, while: "while the file's structure was checked")
      if reason == .workBudget { error.detected = naming.name() }
      throw error
    case .failure(.truncated(let detail)):
      // The transfer completed; the file itself is cut short: a rejection, not a failed fetch.
      throw AttachmentError(
        .truncated, "The file is cut short: \(detail).", detected: naming.name(), kind: .rejection)
    case .failure(.malformed(let detail)):
      throw AttachmentError(.unsupportedType, "The file is malformed: \(detail).", detected: naming.name())
    case .failure(.noMedia(let detail)):
      throw AttachmentError(.empty, "The file holds nothing to play: \(detail).", kind: .rejection)
    }
  }

  /// The streams' codecs strings, each once, in order.
  private static func codecs(of streams: [MediaStream]) -> [String] {
    var seen = Set<String>()
    return streams.map(\.codec).filter { seen.insert($0).inserted }
  }

  private func check(type: MediaType, report: ProbeReport, size: Int64) throws(AttachmentError) {
    if let violation = limits.violation(
      type: type, bytes: size, durationSeconds: report.durationSeconds, width: report.width,
      height: report.height)
    {
      throw violation
    }
    if type.category == .video, report.durationSeconds == nil {
      throw AttachmentError(
        .unknownDuration,
        "The video's duration cannot be established (no movie, track, fragment or time stamp duration), so its length limit of \(ValidationLimits.tenths(limits.maximumVideoSeconds)) s cannot be checked."
      )
    }
  }

  private func warnings(type: MediaType, detected: String?) -> [String] {
    var warnings: [String] = []
    if !type.isInApplesTable {
      warnings.append(
        "\(type.fileExtension.uppercased()) is outside Apple's published attachment types; iOS accepts it with the type hint \(type.uti)."
      )
    }
    return warnings
  }
}

/// libmagic's name for a file's first bytes (after an ID3v2 tag), asked at most once and only
/// when something needs it: the name of a refused file.
private struct MagicNaming {
  private let file: FileBytes
  private var known: String??
  private var read: [UInt8]?

  /// Naming for `file`; `known` is the name streaming already asked for, if it did.
  init(file: FileBytes, known: String?) {
    self.file = file
    self.known = known.map { .some($0) }
  }

  /// The sniffing window: up to 64 KiB after an ID3v2 tag, read once (identification and a
  /// refusal's name share it).
  mutating func window() -> [UInt8] {
    if let read { return read }
    let head = file.bytes(at: 0, count: 10)
    let tagLength = head.withUnsafeBytes { MediaProbe.id3v2Length($0) }
    let window = file.bytes(at: Int64(tagLength), count: SniffWindow.maximumBytes)
    read = window
    return window
  }

  /// libmagic's MIME type for the window (asked now, if it was not yet), or `nil` when
  /// libmagic cannot be loaded.
  mutating func name() -> String? {
    if let known { return known }
    let window = window()
    let detected = window.withUnsafeBytes { MagicSniffer.mimeType(of: $0) }
    known = .some(detected)
    return detected
  }

  /// The name if it was asked (for the validation's ``Validation/detectedMIME``), else `nil`.
  var asked: String? { known ?? nil }
}
