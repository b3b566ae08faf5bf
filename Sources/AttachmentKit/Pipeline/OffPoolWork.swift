import Dispatch
import PosixLock

/// Runs the pipeline's synchronous, file-sized work (the complete-file checks, rescues and
/// publishing) on threads of its own, off Swift's cooperative pool.
///
/// The pool has one thread per core; a long structural walk there would hold back the timers
/// that answer every other request at its deadline. Here each piece of work gets a thread of
/// its own (``BackgroundWork/start(_:qos:_:)``): a slow check or a long transcode costs its
/// own thread only, and never queues another request's check behind it. The work gets a
/// ``StopSignal`` that carries the request's deadline and is raised when the calling task is
/// cancelled, so the walk stops promptly either way.
///
/// The work may write state its caller reads after the hop (``MissDriver`` does). The
/// continuation orders the two, but through the concurrency runtime's atomics, which
/// ThreadSanitizer does not see in an executable (its annotations are found only in a process
/// that exports the sanitizer's symbols): so the work runs holding a pthread lock the caller
/// takes after it resumes, an order the sanitizer sees (one uncontended lock per hop).
enum OffPoolWork {
  /// Runs `work` on a thread of its own with a signal for `deadline`, and returns its result.
  /// When the calling task is cancelled the signal is raised; the work decides how to stop.
  static func run<Value: Sendable>(
    deadline: ContinuousClock.Instant, _ work: @escaping @Sendable (StopSignal) -> Value
  ) async -> Value {
    let signal = StopSignal(deadline: deadline)
    let handoff = Locked(())
    let value = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        BackgroundWork.start("AttachmentKit.file-check") {
          continuation.resume(returning: handoff.withLock { _ in work(signal) })
        }
      }
    } onCancel: {
      signal.cancel()
    }
    handoff.withLock { _ in }
    return value
  }
}
