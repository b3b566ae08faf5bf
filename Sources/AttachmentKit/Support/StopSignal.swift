import Synchronization

/// When a long piece of synchronous work must stop: an absolute deadline, and a cancellation
/// flag another thread can raise.
///
/// The complete-file checks run on their own threads, off Swift's cooperative pool, where there
/// is no task to ask `Task.isCancelled`; the pipeline raises this flag from the request task's
/// cancellation handler instead. Work that runs inside a task is stopped by either.
final class StopSignal: Sendable {
  /// The absolute instant after which the work is pointless; nil: none.
  let deadline: ContinuousClock.Instant?
  private let raised = Atomic<Bool>(false)

  /// A signal that stops at `deadline` (nil: never) or when ``cancel()`` is called.
  init(deadline: ContinuousClock.Instant?) {
    self.deadline = deadline
  }

  /// Raises the flag: every later ``reason`` is `.cancelled`. Safe from any thread.
  func cancel() {
    raised.store(true, ordering: .releasing)
  }

  /// Why the work must stop now, or nil while it may go on. Cancellation wins over the
  /// deadline, as the caller who cancelled is no longer waiting for either answer.
  var reason: ProbeStop? {
    if raised.load(ordering: .acquiring) || Task.isCancelled { return .cancelled }
    if let deadline, ContinuousClock.now >= deadline { return .deadline }
    return nil
  }

  /// The error a caller gets when the work stopped for `reason`.
  static func error(for reason: ProbeStop, while doing: String) -> AttachmentError {
    switch reason {
    case .cancelled: AttachmentError.cancelledError()
    case .deadline: AttachmentError(.deadlineExceeded, "The deadline passed \(doing).")
    case .workBudget:
      AttachmentError(
        .unsupportedType,
        "The file is malformed: its structure needs more work to check than its size justifies.")
    }
  }
}
