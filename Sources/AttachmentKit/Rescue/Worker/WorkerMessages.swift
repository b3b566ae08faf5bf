/// Which rescuer a worker runs for a job, with everything it needs to be rebuilt there.
enum WorkerRescuer: Codable, Sendable {
  /// ``ImageRescuer`` with its settings and the limits it delivers within.
  case image(RescueConfiguration, ValidationLimits)
  /// ``MediaRescuer`` with its settings.
  case media(MediaRescueConfiguration)
  /// ``PosterRescuer`` with its settings.
  case poster(PosterConfiguration)
  /// No rescue: the time of an accepted video's first frame that is not nearly black
  /// (``WorkerReply/posterTime``), with its settings.
  case posterTime(PosterTimeConfiguration)
  /// No rescue: an accepted file's decode check (``DecodeCheckConfiguration``): its container
  /// opened and the first second of each stream it plays decoded (an empty reply, an error, or
  /// ``WorkerReply/unchecked``).
  case decodeCheck(DecodeCheckConfiguration)
  /// No rescue: one of the sandbox's probes, tried from inside the confined worker
  /// (``WorkerReply/probe``), with what it aims at.
  case probe(SandboxProbeJob)

  /// The library its workers load (their start-up argument `--preload`).
  var library: WorkerLibrary {
    switch self {
    case .image: .libvips
    case .probe: .bare
    case .media, .poster, .posterTime, .decodeCheck: .ffmpeg
    }
  }

  /// The job's kind, as ``RescueWorkers/jobsRun()`` counts it.
  var kind: RescueWorkers.JobKind {
    switch self {
    case .image: .image
    case .media: .media
    case .poster: .poster
    case .posterTime: .posterTime
    case .decodeCheck: .decodeCheck
    case .probe: .probe
    }
  }

  /// What a rescue in a worker is called in messages.
  var noun: String {
    switch self {
    case .image: "image"
    case .media: "media file"
    case .poster: "poster"
    case .posterTime: "poster time"
    case .decodeCheck: "decode check"
    case .probe: "sandbox probe"
    }
  }
}

/// A library a worker loads before its first job, when asked to (`--preload NAME`).
enum WorkerLibrary: String, Sendable, Codable, Hashable {
  case libvips
  case ffmpeg
  /// None: a worker started and confined as every other, for the sandbox's probes, which need
  /// no library (and so do not pay a library's load some thirty times per check).
  case bare
}

/// A job as it crosses to a worker: the rescue's input as a value. The source and output go
/// beside it as descriptors (SCM_RIGHTS), so the worker opens no path of its parent's.
struct WorkerJob: Codable, Sendable {
  /// The rescuer to run, with its settings.
  var rescuer: WorkerRescuer
  /// The source's size in bytes.
  var bytes: Int64
  /// The refusal to undo, with what validation measured.
  var refusal: Refusal
  /// What the delivered file must meet.
  var limits: ValidationLimits
  /// Seconds left until the job's deadline when it was sent; `nil`: none (the parent still
  /// kills the worker at the real deadline).
  var secondsLeft: Double?
}

/// A worker's answer: the rescue's provenance, or why it failed.
struct WorkerReply: Codable, Sendable {
  var rescue: Rescue?
  var error: WireError?
  /// A probe's outcome (``WorkerRescuer/probe(_:)``).
  var probe: SandboxProbeOutcome?
  /// How the worker confined itself for the job.
  var confinement: WorkerConfinement?
  /// A poster time job's answer: the time in seconds, `nil` when none is proposed.
  var posterTime: Double?
  /// A decode check's answer when it could not check (FFmpeg's libraries are not installed,
  /// or none of them decodes the stream): why.
  var unchecked: String?
}

/// An ``AttachmentError`` as a value on the worker's socket.
struct WireError: Codable, Sendable {
  var code: String
  var kind: String
  var message: String
  var httpStatus: Int?
  var detected: String?
  /// The error's ``AttachmentError/sourceVerdict``, as a value (a worker that ran out of
  /// memory says so here, not in words the parent would parse).
  var sourceVerdict: AttachmentError.SourceVerdict?

  init(_ error: AttachmentError) {
    code = error.code.rawValue
    kind = error.kind.rawValue
    message = error.message
    httpStatus = error.httpStatus
    detected = error.detected
    sourceVerdict = error.sourceVerdict
  }

  /// The error with what the rescue's libraries logged (``LibraryLog``) at the end of its
  /// message: `… (libvips: …; FFmpeg: …)`, the first three.
  func adding(_ messages: [String]) -> WireError {
    var copy = self
    copy.message += " (\(messages.prefix(3).joined(separator: "; ")))"
    return copy
  }

  /// The error again (an unknown kind reads as a local failure).
  var error: AttachmentError {
    let kind = AttachmentError.Kind(rawValue: kind) ?? .local
    var error = AttachmentError(
      AttachmentError.Code(code, kind: kind), message, httpStatus: httpStatus, detected: detected, kind: kind)
    error.sourceVerdict = sourceVerdict
    return error
  }
}

/// A ``Refusal`` as a value on the worker's socket (its error as a ``WireError``).
extension Refusal: Codable {
  private enum CodingKeys: String, CodingKey {
    case reason, format, category, type, facts, error
  }

  /// Decodes a refusal; throws `DecodingError` when a field is missing or of the wrong type.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      try container.decode(WireError.self, forKey: .error).error,
      reason: try container.decode(Reason.self, forKey: .reason),
      format: try container.decodeIfPresent(String.self, forKey: .format),
      category: try container.decodeIfPresent(MediaType.Category.self, forKey: .category),
      type: try container.decodeIfPresent(MediaType.self, forKey: .type),
      facts: try container.decode(MediaFacts.self, forKey: .facts))
  }

  /// Encodes the refusal; throws what the encoder throws.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(reason, forKey: .reason)
    try container.encodeIfPresent(format, forKey: .format)
    try container.encodeIfPresent(category, forKey: .category)
    try container.encodeIfPresent(type, forKey: .type)
    try container.encode(facts, forKey: .facts)
    try container.encode(WireError(error), forKey: .error)
  }
}

/// The largest message either side of a worker's socket sends, in bytes.
let workerMessageLimit = 64 * 1024
