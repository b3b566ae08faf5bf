/// A stage that turns a refused body into an attachment: the seam every rescue plugs into.
///
/// The pipeline holds a list of rescuers (``PipelineConfiguration/rescuers``) and, when the
/// validator refuses a body, asks each in order whether it can undo that refusal
/// (``canRescue(_:)``); the first that can runs (``rescue(_:)``) and its output goes back through
/// the same validator before it is published. The cache stores the ``Rescue`` it reports, keyed
/// by ``name``; ``HitPolicy`` asks the rescuer of that name whether a cached derivative may stand
/// for its source under a caller's limits (``sourceRefusal(of:)``). A new rescuer therefore
/// needs no change to the pipeline, the hit policy or the cache record: conform, and add it to
/// the list. ``ImageRescuer`` is the model to copy.
///
/// Conformers are values safe to share between threads; ``rescue(_:)`` runs on a check thread
/// (off Swift's cooperative pool) and may block it.
public protocol Rescuer: Sendable {
  /// A short, stable, lower-case name stored with every file it delivers (the record's
  /// `rescued-by` line), e.g. `"image"`. Two rescuers in one list never share a name.
  var name: String { get }

  /// The largest source this rescuer downloads, in bytes: a body it may rescue streams on up
  /// to this size although it is over every attachment limit.
  var maximumSourceBytes: Int64 { get }

  /// Whether this rescuer can turn a body refused with `evidence.refusal` into an attachment,
  /// judged from what is already known (no file is read). `false` when there is no refusal.
  func canRescue(_ evidence: RescueEvidence) -> Bool

  /// Starts in the background what a likely rescue needs (a library to load), when the first
  /// bytes already show one: an accepted file pays nothing. The caller waits for the returned
  /// preparation before it returns, used or not. `nil`: nothing to start.
  func prepare(for evidence: RescueEvidence, limits: ValidationLimits) -> (any RescuePreparation)?

  /// Rescues `job.source` into `job.output` within `job.deadline`. The standard rescuers run
  /// their libraries in a worker process (``RescueWorkers``), never in the caller's.
  /// - Returns: the provenance of the delivered file (its ``Rescue/rescuer`` is ``name``).
  /// - Throws: the refusal itself, with why the rescue could not help, when it cannot;
  ///   `too_large` or `too_many_pixels` for a source over this rescuer's own limits;
  ///   `deadline_exceeded`; `io_error`. The caller removes the output on failure.
  func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue

  /// For a file the validator accepted that a device would not fully play (an H.264 movie
  /// whose only audio iOS does not decode plays silent), the refusal this rescuer would undo
  /// to improve it; `nil` (the default) when it leaves the file as it is. The pipeline then
  /// rescues the file, and delivers the accepted original when the rescue fails.
  func improvement(for validation: Validation) -> AttachmentError?

  /// The refusal a cached derivative this rescuer made gets under this rescuer's own source
  /// limits (a caller whose limits are lower than those it was made under), or `nil` when it
  /// may be served.
  func sourceRefusal(of provenance: Rescue) -> AttachmentError?
}

/// What the miss path knows of a body when it asks a ``Rescuer``: the refusal and what the
/// first bytes proved while they streamed. Built from the validation's verdict, so no rescuer
/// reads the file again to decide.
public struct RescueEvidence: Sendable, Equatable {
  /// The refusal a rescue would undo; `nil` when nothing has been refused (yet).
  public var refusal: AttachmentError?
  /// The accepted category the first bytes identified as (a JPEG is `.image`); `nil` when
  /// they are no accepted format, or a container whose tracks decide (MP4).
  public var category: MediaType.Category?
  /// What the bytes are, as a MIME type, when known (libmagic's name, or the refusal's).
  public var detected: String?
  /// The width in pixels from the first bytes' header, when it carries one.
  public var width: Int?
  /// The height in pixels from the first bytes' header, when it carries one.
  public var height: Int?
  /// The body's size in bytes (so far, while it streams).
  public var bytes: Int64

  /// Makes evidence; every fact but the size is optional.
  public init(
    refusal: AttachmentError? = nil, category: MediaType.Category? = nil, detected: String? = nil,
    width: Int? = nil, height: Int? = nil, bytes: Int64
  ) {
    self.refusal = refusal
    self.category = category
    self.detected = detected ?? refusal?.detected
    self.width = width
    self.height = height
    self.bytes = bytes
  }
}

extension RescueEvidence {
  /// The same evidence with `refusal` as the refusal to undo (and what it detected, when it
  /// names the bytes).
  public func refused(with refusal: AttachmentError) -> RescueEvidence {
    var evidence = self
    evidence.refusal = refusal
    evidence.detected = refusal.detected ?? detected
    return evidence
  }

  /// The evidence of what streaming proved of a body's first bytes (`sniffed`, `nil` when they
  /// proved nothing acceptable), with the refusal to undo and the body's size.
  init(sniffed: SniffVerdict?, refusal: AttachmentError?, bytes: Int64) {
    self.init(
      refusal: refusal, category: sniffed?.format.row.mediaType?.category, detected: sniffed?.detected,
      width: sniffed?.width, height: sniffed?.height, bytes: bytes)
  }
}

/// One rescue to run: the refused source, where the delivered file goes, and what it must meet.
public struct RescueJob: Sendable {
  /// The refused file; open it by this path only (a rescuer's library may read options from a
  /// caller's file name, so the pipeline hands out paths it made).
  public var source: String
  /// The source's size in bytes.
  public var bytes: Int64
  /// Why the validator refused it (see ``Rescuer/canRescue(_:)``).
  public var refusal: AttachmentError
  /// Where the delivered file goes (created or replaced).
  public var output: String
  /// What the delivered file must meet (the pipeline validates it against these afterwards).
  public var limits: ValidationLimits
  /// The absolute instant by which the rescue must be done; `nil`: none.
  public var deadline: ContinuousClock.Instant?
  /// Whether the job's caller has gone (a cancelled task, a client that hung up): the rescue's
  /// worker is then killed at once. Asked every 50 ms while the job runs; never by default.
  public var isCancelled: @Sendable () -> Bool

  /// Makes a job.
  public init(
    source: String, bytes: Int64, refusal: AttachmentError, output: String, limits: ValidationLimits,
    deadline: ContinuousClock.Instant?, isCancelled: @escaping @Sendable () -> Bool = { false }
  ) {
    self.source = source
    self.bytes = bytes
    self.refusal = refusal
    self.output = output
    self.limits = limits
    self.deadline = deadline
    self.isCancelled = isCancelled
  }
}

/// Something a ``Rescuer`` started in the background for a likely rescue.
public protocol RescuePreparation: Sendable {
  /// Blocks until the background work is over, succeeded or not. Called exactly once, before
  /// the caller returns (a process must not exit while a library is half loaded).
  func wait()
}

extension Rescuer {
  /// No improvement of accepted files: see ``Rescuer/improvement(for:)``.
  public func improvement(for validation: Validation) -> AttachmentError? { nil }
}

extension [any Rescuer] {
  /// The first rescuer that would improve an accepted file, with the refusal it undoes.
  func improver(for validation: Validation) -> (rescuer: any Rescuer, refusal: AttachmentError)? {
    for rescuer in self {
      if let refusal = rescuer.improvement(for: validation) { return (rescuer, refusal) }
    }
    return nil
  }

  /// What the first rescuer with something to prepare for `evidence` started (see
  /// ``Rescuer/prepare(for:limits:)``), asking each rescuer once.
  func preparation(for evidence: RescueEvidence, limits: ValidationLimits) -> (any RescuePreparation)? {
    for rescuer in self {
      if let preparation = rescuer.prepare(for: evidence, limits: limits) { return preparation }
    }
    return nil
  }

  /// The first rescuer that can undo the refusal in `evidence`, if any.
  func rescuer(for evidence: RescueEvidence) -> (any Rescuer)? {
    first { $0.canRescue(evidence) }
  }

  /// The rescuer called `name`, if the list has it.
  func rescuer(named name: String) -> (any Rescuer)? {
    first { $0.name == name }
  }

  /// The largest source any rescuer downloads, in bytes (0 with none).
  var largestSourceBytes: Int64 { map(\.maximumSourceBytes).max() ?? 0 }
}
