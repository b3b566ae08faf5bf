import Glibc
import PosixLock

/// Runs a rescue on a thread of its own (libvips blocks; the cooperative pool must not) and
/// answers by the deadline whatever libvips is doing.
///
/// libvips cannot be interrupted mid-operation. When the deadline passes first, the caller is
/// answered `deadline_exceeded` at once; the thread finishes (its work is bounded by the
/// decode budget) and hands its result to `abandon`, which removes what it made.
enum RescueThread {
  /// The result of `work`, or `deadline_exceeded` at `deadline`, or `io_error` when no thread
  /// can be started.
  static func run<T: Sendable>(
    deadline: ContinuousClock.Instant, work: @escaping @Sendable () -> Result<T, AttachmentError>,
    abandon: @escaping @Sendable (T) -> Void
  ) async -> Result<T, AttachmentError> {
    await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, AttachmentError>, Never>) in
      let slot = Locked<CheckedContinuation<Result<T, AttachmentError>, Never>?>(continuation)
      let timer = Task {
        try? await Task.sleep(until: deadline, clock: .continuous)
        guard !Task.isCancelled, let waiting = slot.withLock({ $0.take() }) else { return }
        waiting.resume(
          returning: .failure(
            AttachmentError(.deadlineExceeded, "The deadline passed while the image was rescued.")))
      }
      let started = detach {
        let result = work()
        timer.cancel()
        if let waiting = slot.withLock({ $0.take() }) {
          waiting.resume(returning: result)
        } else if case .success(let value) = result {
          abandon(value)
        }
      }
      if !started, let waiting = slot.withLock({ $0.take() }) {
        timer.cancel()
        waiting.resume(
          returning: .failure(AttachmentError(.ioError, "Cannot start a thread for the rescue.")))
      }
    }
  }

  /// Runs `body` on a new detached thread; `false` when none could start.
  private static func detach(_ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box: Sendable {
      let body: @Sendable () -> Void
      init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(
      &thread, nil,
      { context in
        guard let context else { return nil }
        Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        return nil
      }, context)
    guard started == 0 else {
      Unmanaged<Box>.fromOpaque(context).release()
      return false
    }
    pthread_detach(thread)
    return true
  }
}
