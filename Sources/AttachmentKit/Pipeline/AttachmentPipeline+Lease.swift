/// One miss per fleet (``FleetStore`` leases): a miss the store has no record for takes the
/// key's lease before it downloads; a miss that finds another instance's lease waits for that
/// instance's record (polling it with backoff) instead of downloading, checking and rescuing
/// the same file again.
///
/// Worst case: a holder that dies leaves its key unserved by the fleet until its lease expires
/// (the holder's own deadline, at most ``StoreConfiguration/leaseSeconds``) plus one poll
/// (at most 1 s). A waiter never waits past half of the time it had left when it began (nor past
/// the lease), so it keeps time to do the work itself; no request waits past its deadline.
extension AttachmentPipeline {
  /// What the lease step decided.
  enum LeaseOutcome: Sendable {
    /// Another instance's record answered while this one waited.
    case answer(Attachment)
    /// This miss holds the lease: do the work, then release it.
    case hold(FleetStore.Lease)
    /// Do the work without a lease (no leases, the store unavailable, or the wait is over).
    case proceed
  }

  /// Takes `url`'s lease, or waits for the holder's record; a lease that is over (released by
  /// a holder whose miss ended, or expired) sends this miss to the store again first, then is
  /// taken over.
  func leaseOrWait(
    _ url: AttachmentURL, store: FleetStore, deadline: ContinuousClock.Instant, start: ContinuousClock.Instant
  ) async -> LeaseOutcome {
    guard store.configuration.usesLeases else { return .proceed }
    let waitEnd = ContinuousClock.now + (deadline - ContinuousClock.now) / 2
    var waited = false
    while ContinuousClock.now < waitEnd, !Task.isCancelled {
      var attempt = await leaseStep(deadline: deadline, store: store) {
        store.takeLease(url.key, expires: $0, timeout: $1)
      }
      if case .over(let holder) = attempt {
        // Its holder may have published since this miss read the store (it writes, then
        // releases): read again rather than repeat its work.
        if case .answer(let answer) = await fromStore(url, deadline: deadline, start: start) {
          return .answer(answer)
        }
        attempt = await leaseStep(deadline: deadline, store: store) {
          store.takeOver(url.key, from: holder, expires: $0, timeout: $1)
        }
      }
      switch attempt {
      case .taken(let lease): return .hold(lease)
      case .unavailable: return .proceed
      case .over: continue
      case .held(let lease):
        if !waited { store.count { $0.leaseWaits += 1 } }
        waited = true
        if let answer = await waitForRecord(url, store: store, lease: lease, until: waitEnd, start: start) {
          store.count { $0.leaseWaitsAnswered += 1 }
          return .answer(answer)
        }
      }
    }
    return .proceed
  }

  /// Runs one lease request off the cooperative pool, with the lease's expiry (the deadline, at
  /// most ``StoreConfiguration/leaseSeconds`` from now) and the store's read budget.
  private func leaseStep(
    deadline: ContinuousClock.Instant, store: FleetStore,
    _ step: @escaping @Sendable (_ expires: Double, _ budget: Duration) -> FleetStore.LeaseAttempt
  ) async -> FleetStore.LeaseAttempt {
    let remaining = deadline - ContinuousClock.now
    let expires = FileSystem.now() + min(store.configuration.leaseSeconds, remaining.seconds)
    let budget = store.readBudget(remaining: remaining)
    return await OffPoolWork.run(deadline: deadline) { _ in step(expires, budget) }
  }

  /// Polls the store for `url`'s record until `lease` expires or `end`, waiting 50 ms, then
  /// twice as long each time up to 1 s; the answer once the record and its content are there.
  /// `nil` also as soon as the lease is seen over or changed without a record (a holder whose
  /// miss was refused or failed publishes nothing and releases it): the caller takes it then.
  private func waitForRecord(
    _ url: AttachmentURL, store: FleetStore, lease: FleetStore.Lease, until end: ContinuousClock.Instant,
    start: ContinuousClock.Instant
  ) async -> Attachment? {
    var pause = Duration.milliseconds(50)
    while true {
      let expiry = ContinuousClock.now + .milliseconds(Int64(max(0, lease.expires - FileSystem.now()) * 1000))
      let stop = min(end, expiry)
      let now = ContinuousClock.now
      guard now < stop else { return nil }
      try? await Task.sleep(for: min(pause, stop - now))
      if Task.isCancelled { return nil }
      pause = min(pause * 2, .seconds(1))
      if case .answer(let answer) = await fromStore(url, deadline: end, start: start) { return answer }
      let budget = store.readBudget(remaining: end - ContinuousClock.now)
      let current = await OffPoolWork.run(deadline: end) { _ in
        store.currentLease(of: url.key, timeout: budget)
      }
      switch current {
      case .held(let now) where now.holder == lease.holder: continue
      case .unavailable: continue
      case .held, .over, .taken: return nil
      }
    }
  }
}

extension Duration {
  /// The duration in seconds, as a `Double`.
  fileprivate var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}
