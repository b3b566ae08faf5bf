import Dispatch

/// Runs the pipeline's synchronous, file-sized work (the complete-file checks and publishing)
/// on threads of its own, off Swift's cooperative pool.
///
/// The pool has one thread per core; a long structural walk there would hold back the timers
/// that answer every other request at its deadline. Here a slow check costs its own thread
/// only. The work gets a ``StopSignal`` that carries the request's deadline and is raised when
/// the calling task is cancelled, so the walk stops promptly either way.
enum OffPoolWork {
  /// A concurrent queue: each blocked or slow check gets its own worker thread, so one slow
  /// file never queues another behind it.
  private static let queue = DispatchQueue(
    label: "AttachmentKit.file-checks", qos: .userInitiated, attributes: .concurrent)

  /// Runs `work` on the check queue with a signal for `deadline`, and returns its result. When
  /// the calling task is cancelled the signal is raised; the work decides how to stop.
  static func run<Value: Sendable>(
    deadline: ContinuousClock.Instant, _ work: @escaping @Sendable (StopSignal) -> Value
  ) async -> Value {
    let signal = StopSignal(deadline: deadline)
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        queue.async { continuation.resume(returning: work(signal)) }
      }
    } onCancel: {
      signal.cancel()
    }
  }
}
