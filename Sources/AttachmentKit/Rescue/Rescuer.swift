/// A stage that turns a refused body into an attachment: the seam every rescue plugs into.
///
/// The pipeline holds a list of rescuers (``PipelineConfiguration/rescuers``). When the
/// validator refuses a body, the refusal becomes a ``Refusal`` value (why, what the bytes are,
/// what validation measured), and the miss chooses, once, the rescuers whose
/// ``canRescue(_:)`` says they undo it, in the list's order: the first runs (``rescue(_:)``),
/// the next is tried only when one fails, and an output goes back through the same validator
/// before it is published. The cache stores the ``Rescue`` it reports, keyed
/// by ``name``; `HitPolicy` asks the rescuer of that name whether a cached derivative may stand
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

  /// Whether this rescuer can turn a file refused with `refusal` into an attachment, judged
  /// from the refusal alone (no file is read).
  func canRescue(_ refusal: Refusal) -> Bool

  /// Starts in the background what a likely rescue needs (a worker, a library to load), when
  /// the first bytes already call for `refusal`, which this rescuer undoes: an accepted file
  /// pays nothing. The caller waits for the returned preparation before it returns, used or not.
  /// `nil` (the default): nothing to wait for.
  func prepare(for refusal: Refusal) -> (any RescuePreparation)?

  /// Rescues `job.source` into `job.output` within `job.deadline`. The standard rescuers run
  /// their libraries in a worker process (``RescueWorkers``), never in the caller's.
  /// - Returns: the provenance of the delivered file (its ``Rescue/rescuer`` is ``name``).
  /// - Throws: the refusal itself, with why the rescue could not help, when it cannot;
  ///   `too_large` or `too_many_pixels` for a source over this rescuer's own limits;
  ///   `deadline_exceeded`; `io_error`. The caller removes the output on failure.
  func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue

  /// For a file the validator accepted that a device would not fully play (an H.264 movie
  /// whose only audio iOS does not decode plays silent), the refusal this rescuer would undo
  /// to improve it (``Refusal/Reason/silentAudio``); `nil` (the default) when it leaves the file
  /// as it is. The pipeline then rescues the file, and delivers the accepted original when the
  /// rescue fails.
  func improvement(for validation: Validation) -> Refusal?

  /// The refusal a cached derivative this rescuer made gets under this rescuer's own source
  /// limits (a caller whose limits are lower than those it was made under), or `nil` when it
  /// may be served.
  func sourceRefusal(of provenance: Rescue) -> AttachmentError?
}

/// One rescue to run: the refused source, where the delivered file goes, and what it must meet.
public struct RescueJob: Sendable {
  /// The refused file; open it by this path only (a rescuer's library may read options from a
  /// caller's file name, so the pipeline hands out paths it made).
  public var source: String
  /// The source's size in bytes.
  public var bytes: Int64
  /// Why the validator refused it, with what it measured (see ``Rescuer/canRescue(_:)``).
  public var refusal: Refusal
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
    source: String, bytes: Int64, refusal: Refusal, output: String, limits: ValidationLimits,
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
  public func improvement(for validation: Validation) -> Refusal? { nil }

  /// Nothing to wait for: see ``Rescuer/prepare(for:)``.
  public func prepare(for refusal: Refusal) -> (any RescuePreparation)? { nil }
}

extension [any Rescuer] {
  /// The rescuers that would improve an accepted file, in order, with the refusal each undoes.
  func improvers(for validation: Validation) -> [(rescuer: any Rescuer, refusal: Refusal)] {
    compactMap { rescuer in rescuer.improvement(for: validation).map { (rescuer, $0) } }
  }

  /// The rescuers that can undo `refusal`, in order: the first is tried, the next only when
  /// one fails.
  func candidates(for refusal: Refusal) -> [any Rescuer] {
    filter { $0.canRescue(refusal) }
  }

  /// What the first rescuer that undoes a refusal the first bytes already call for started
  /// (see ``Rescuer/prepare(for:)``); `nil` when none is called for, or nothing was started.
  func preparation(for predicted: Refusal?) -> (any RescuePreparation)? {
    guard let predicted, let rescuer = first(where: { $0.canRescue(predicted) }) else { return nil }
    return rescuer.prepare(for: predicted)
  }

  /// The rescuer called `name`, if the list has it.
  func rescuer(named name: String) -> (any Rescuer)? {
    first { $0.name == name }
  }

  /// The largest source any rescuer downloads, in bytes (0 with none).
  var largestSourceBytes: Int64 { map(\.maximumSourceBytes).max() ?? 0 }
}
