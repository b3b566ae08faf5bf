import PosixLock

/// Coalesces concurrent work per key: N callers for one key share one run of the work.
///
/// Each caller waits on its own continuation, so a caller that is cancelled (or whose own
/// deadline passes) leaves at once while the others keep waiting; the shared work is
/// cancelled only when every caller has left.
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  typealias Outcome = Result<Value, AttachmentError>

  private final class Flight: Sendable {
    let waiters = Locked<[Int: CheckedContinuation<Outcome, Never>]>([:])
    let task = Locked<Task<Void, Never>?>(nil)
  }

  private struct State {
    var flights: [Key: Flight] = [:]
    var nextWaiter = 0
  }

  private let state = Locked(State())

  /// Runs `work` for `key`, or joins the run already under way, and returns its outcome.
  /// Returns `cancelled` if the calling task is cancelled, and `deadline_exceeded` at
  /// `deadline` if the shared work has not answered by then.
  func run(
    _ key: Key, deadline: ContinuousClock.Instant,
    _ work: @escaping @Sendable () async -> Outcome
  ) async -> Outcome {
    let (flight, id, isLeader) = state.withLock { state -> (Flight, Int, Bool) in
      state.nextWaiter += 1
      if let flight = state.flights[key] { return (flight, state.nextWaiter, false) }
      let flight = Flight()
      state.flights[key] = flight
      return (flight, state.nextWaiter, true)
    }
    let timer = Task {
      try? await Task.sleep(until: deadline, clock: .continuous)
      if !Task.isCancelled {
        self.leave(
          flight, id: id, key: key,
          with: .failure(
            AttachmentError(.deadlineExceeded, "The deadline passed before the attachment was ready.")))
      }
    }
    defer { timer.cancel() }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        flight.waiters.withLock { $0[id] = continuation }
        if Task.isCancelled {
          leave(flight, id: id, key: key, with: .failure(AttachmentError.cancelledError()))
        }
        if isLeader {
          let task = Task {
            let outcome = await work()
            self.finish(flight, key: key, with: outcome)
          }
          flight.task.withLock { $0 = task }
          // Every waiter may have left before the task existed to be cancelled.
          if flight.waiters.withLock({ $0.isEmpty }) { task.cancel() }
        }
      }
    } onCancel: {
      leave(flight, id: id, key: key, with: .failure(AttachmentError.cancelledError()))
    }
  }

  /// How many callers wait on the run for `key` now (0: none under way).
  func waiting(for key: Key) -> Int {
    guard let flight = state.withLock({ $0.flights[key] }) else { return 0 }
    return flight.waiters.withLock { $0.count }
  }

  /// Answers every waiter and retires the flight.
  private func finish(_ flight: Flight, key: Key, with outcome: Outcome) {
    state.withLock { state in
      if state.flights[key] === flight { state.flights[key] = nil }
    }
    let waiters = flight.waiters.withLock { waiters in
      defer { waiters.removeAll() }
      return waiters
    }
    for continuation in waiters.values { continuation.resume(returning: outcome) }
  }

  /// Answers one waiter early; cancels the work when it was the last one.
  private func leave(_ flight: Flight, id: Int, key: Key, with outcome: Outcome) {
    let (continuation, empty) = flight.waiters.withLock { waiters in
      (waiters.removeValue(forKey: id), waiters.isEmpty)
    }
    guard let continuation else { return }
    continuation.resume(returning: outcome)
    if empty {
      state.withLock { state in
        if state.flights[key] === flight { state.flights[key] = nil }
      }
      flight.task.withLock { $0 }?.cancel()
    }
  }
}
