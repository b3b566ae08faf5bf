import PosixLock
import Synchronization

/// Coalesces concurrent work per key: N callers for one key share one run of the work.
///
/// Each caller waits on its own continuation, so a caller that is cancelled (or whose own
/// deadline passes) leaves at once while the others keep waiting; the shared work is
/// cancelled only when every caller has left.
///
/// A caller that decided to run the work from something it read before (a cache miss) passes
/// the ``generation`` it read first: when a run for its key finished since, it is told so
/// instead of starting the work again (the finished run's result may be what it looked for).
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
  typealias Outcome = Result<Value, AttachmentError>

  private final class Flight: Sendable {
    /// The callers waiting, and the outcome once the work finished: a caller that found the
    /// flight just before it finished, and comes to wait after, takes the outcome at once
    /// rather than waiting for a resume that was already given out (it waited until its
    /// deadline: one of 200 serve requests for one URL answered 504 after 25 s).
    struct Waiting {
      var waiters: [Int: CheckedContinuation<Outcome, Never>] = [:]
      var outcome: Outcome?
    }
    let waiting = Locked(Waiting())
    let task = Locked<Task<Void, Never>?>(nil)
    let phase = FlightPhase()
  }

  private struct State {
    var flights: [Key: Flight] = [:]
    var nextWaiter = 0
    var finishes = FinishRecord()
  }

  /// The generation at which the last run of each recently finished key ended, for the
  /// ``SingleFlight/recentFinishes`` most recent runs; older ones are forgotten, and a caller
  /// whose generation is older than all that is kept is told a run may have finished.
  private struct FinishRecord {
    var last: [Key: UInt64] = [:]
    var order: [(key: Key, generation: UInt64)] = []
    var next = 0
    /// The newest generation forgotten.
    var forgotten: UInt64 = 0

    /// Records that a run for `key` finished as the run numbered `generation`.
    mutating func record(_ key: Key, generation: UInt64) {
      last[key] = generation
      let entry = (key: key, generation: generation)
      if order.count < SingleFlight.recentFinishes {
        order.append(entry)
        return
      }
      let evicted = order[next]
      if last[evicted.key] == evicted.generation { last[evicted.key] = nil }
      forgotten = evicted.generation
      order[next] = entry
      next = (next + 1) % order.count
    }

    /// Whether a run for `key` may have finished after `since`.
    func finished(_ key: Key, after since: UInt64) -> Bool {
      if let last = last[key], last > since { return true }
      return forgotten > since
    }
  }

  /// How many finished runs are remembered (by key) for ``generation`` checks.
  static var recentFinishes: Int { 1024 }

  private let state = Locked(State())
  /// Runs finished so far: raised under `state`'s lock as each is recorded, read without it
  /// (every call reads it, cache hits included).
  private let finishedRuns = Atomic<UInt64>(0)

  /// How many runs have finished: read it before what made the caller decide to run the work,
  /// and pass it to ``run(_:deadline:unlessFinishedSince:_:)``.
  var generation: UInt64 { finishedRuns.load(ordering: .acquiring) }

  /// Runs `work` for `key`, or joins the run already under way, and returns its outcome.
  /// Returns `cancelled` if the calling task is cancelled, and `deadline_exceeded` at
  /// `deadline` if the shared work has not answered by then. Returns `nil`, and starts
  /// nothing, when no run is under way and one for `key` finished after the ``generation``
  /// `since` (the caller looks again at what the finished run left).
  func run(
    _ key: Key, deadline: ContinuousClock.Instant, unlessFinishedSince since: UInt64? = nil,
    _ work: @escaping @Sendable () async -> Outcome
  ) async -> Outcome? {
    await run(key, deadline: deadline, unlessFinishedSince: since) { _ in await work() }
  }

  /// ``run(_:deadline:unlessFinishedSince:_:)`` whose work says where it is (`phase`): a caller
  /// whose deadline passes while it waits is told the same as the work's own deadline would
  /// have said there ("The deadline passed before the download finished."), whichever of the
  /// two clocks fires first.
  func run(
    _ key: Key, deadline: ContinuousClock.Instant, unlessFinishedSince since: UInt64? = nil,
    _ work: @escaping @Sendable (_ phase: FlightPhase) async -> Outcome
  ) async -> Outcome? {
    let joined = state.withLock { state -> (Flight, Int, Bool)? in
      state.nextWaiter += 1
      if let flight = state.flights[key] { return (flight, state.nextWaiter, false) }
      if let since, state.finishes.finished(key, after: since) { return nil }
      let flight = Flight()
      state.flights[key] = flight
      return (flight, state.nextWaiter, true)
    }
    guard let (flight, id, isLeader) = joined else { return nil }
    let timer = Task {
      try? await Task.sleep(until: deadline, clock: .continuous)
      if !Task.isCancelled {
        self.leave(
          flight, id: id, key: key,
          with: .failure(
            flight.phase.noting(
              AttachmentError(.deadlineExceeded, "The deadline passed \(flight.phase.text)."))))
      }
    }
    defer { timer.cancel() }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let finished = flight.waiting.withLock { waiting -> Outcome? in
          if let outcome = waiting.outcome { return outcome }
          waiting.waiters[id] = continuation
          return nil
        }
        if let finished {
          continuation.resume(returning: finished)
          return
        }
        if Task.isCancelled {
          leave(
            flight, id: id, key: key, with: .failure(flight.phase.noting(AttachmentError.cancelledError())))
        }
        if isLeader {
          let task = Task {
            let outcome = await work(flight.phase)
            self.finish(flight, key: key, with: outcome)
          }
          flight.task.withLock { $0 = task }
          // Every waiter may have left before the task existed to be cancelled.
          if flight.waiting.withLock({ $0.waiters.isEmpty }) { task.cancel() }
        }
      }
    } onCancel: {
      leave(flight, id: id, key: key, with: .failure(flight.phase.noting(AttachmentError.cancelledError())))
    }
  }

  /// How many callers wait on the run for `key` now (0: none under way).
  func waiting(for key: Key) -> Int {
    guard let flight = state.withLock({ $0.flights[key] }) else { return 0 }
    return flight.waiting.withLock { $0.waiters.count }
  }

  /// Answers every waiter and retires the flight.
  private func finish(_ flight: Flight, key: Key, with outcome: Outcome) {
    state.withLock { state in
      if state.flights[key] === flight { state.flights[key] = nil }
      let generation = finishedRuns.wrappingAdd(1, ordering: .releasing).newValue
      state.finishes.record(key, generation: generation)
    }
    let waiters = flight.waiting.withLock { waiting in
      waiting.outcome = outcome
      defer { waiting.waiters.removeAll() }
      return waiting.waiters
    }
    for continuation in waiters.values { continuation.resume(returning: outcome) }
  }

  /// Answers one waiter early; cancels the work when it was the last one.
  private func leave(_ flight: Flight, id: Int, key: Key, with outcome: Outcome) {
    let (continuation, empty) = flight.waiting.withLock { waiting in
      (waiting.waiters.removeValue(forKey: id), waiting.waiters.isEmpty)
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

/// Where a shared run is ("before the download finished", "while the file was rescued"): what a
/// waiter whose deadline passes is told it passed during. Set by the run, read by the waiters'
/// timers.
final class FlightPhase: Sendable {
  private let phase = Locked("before the attachment was ready")
  /// The body bytes the run's downloads received: what a waiter that leaves early still counts
  /// as transferred.
  let receivedBytes = ReceivedBytes()

  /// `error` with the bytes received so far, when there are any.
  func noting(_ error: AttachmentError) -> AttachmentError {
    let received = receivedBytes.value
    guard received > 0, error.bytesReceived == nil else { return error }
    var noted = error
    noted.bytesReceived = received
    return noted
  }

  /// The run is now `phase`: a phrase that completes "The deadline passed …".
  func enter(_ phase: String) { self.phase.withLock { $0 = phase } }

  /// The phrase of the run's present phase.
  var text: String { phase.withLock { $0 } }
}
