/// The object store as the second tier of a miss (``StoreConfiguration``): after the local
/// cache and before the origin. A key the store holds is read (within a bounded share of the
/// deadline, every byte verified), adopted into the local cache and answered from there, under
/// the same policy as any local hit; a miss the origin answered is written to the store in the
/// background.
extension AttachmentPipeline {
  /// What the store gave a miss: an answer, a stale copy to revalidate, no record (the
  /// fleet's first miss of the key), or nothing usable (a failure, a corrupt object, a copy
  /// this caller's policy refuses).
  enum StoreOutcome: Sendable {
    case answer(Attachment)
    case stale(CacheEntry)
    case missing
    case nothing
  }

  /// Looks `url` up in the store (when there is one), within its share of the time left to
  /// `deadline`, on a thread of its own; a verified copy is adopted into the local cache and
  /// judged as a local hit would be.
  func fromStore(
    _ url: AttachmentURL, deadline: ContinuousClock.Instant, start: ContinuousClock.Instant
  ) async -> StoreOutcome {
    guard let store else { return .nothing }
    let budget = store.readBudget(remaining: deadline - ContinuousClock.now)
    guard budget > .milliseconds(1) else { return .nothing }
    let read = await OffPoolWork.run(deadline: deadline) { [self] _ -> FleetStore.ReadResult in
      // The content goes straight into a body file of the local cache (constant memory).
      guard let body = try? cache.makeBodyFile() else { return .failed }
      let result = store.read(url.key, budget: budget, maximumBytes: transferLimit, into: body.descriptor)
      guard case .found(let found) = result else {
        body.discard()
        return result
      }
      do throws(AttachmentError) {
        _ = try cache.adopt(body, record: found.record, key: url.key, now: FileSystem.now())
        return result
      } catch {
        store.log("a verified copy could not be kept in the local cache: \(error.message)")
        return .failed
      }
    }
    switch read {
    case .found: break
    case .missing: return .missing
    case .failed: return .nothing
    }
    switch lookup(url) {
    case .hit(var attachment):
      // The request's time, the store's reads included (the lookup timed itself alone).
      attachment.totalMicroseconds = Self.microseconds(since: start)
      return .answer(attachment)
    case .stale(let copy) where !copy.confirming: return .stale(copy.entry)
    case .stale, .refused, .miss: return .nothing
    }
  }

  /// Queues the store write of what a miss of `url` just published (fetched, rescued or
  /// revalidated), when there is a store and the answer is indexed.
  func writeBehind(_ result: Result<Attachment, AttachmentError>, url: AttachmentURL) {
    guard let store, case .success(let attachment) = result, attachment.source != .cache,
      !attachment.isUnindexed, attachment.freshUntil != nil, let entry = tier.entry(for: url.key)
    else { return }
    store.write(entry.record, contentPath: entry.path, key: url.key)
  }

  /// Checks the configured store at start: writes and reads back a small object under its
  /// prefix, within `timeout`. A face calls it once before it serves, so that a wrong setting is
  /// one clear error. It blocks the calling thread: call it at start, not on Swift's
  /// cooperative pool. Does nothing without a store.
  /// - Throws: `store_unavailable` naming the setting to fix (the endpoint, the bucket, the
  ///   credentials, the region).
  public func checkStore(timeout: Duration = .seconds(10)) throws(AttachmentError) {
    try store?.check(timeout: timeout)
  }

  /// What the store tier did so far (shared with the pipelines of this one's profiles), or
  /// `nil` without a store.
  public var storeCounters: StoreCounters? { store?.counters }

  /// Waits until the store writes queued so far are done (written or dropped), at most
  /// `timeout`, or until the calling task is cancelled: a command that exits after its answers
  /// calls it so that its writes reach the store. Returns at once without a store.
  /// - Returns: whether none is left.
  @discardableResult
  public func finishStoreWrites(timeout: Duration) async -> Bool {
    guard let store else { return true }
    let end = ContinuousClock.now + timeout
    while store.pendingWrites > 0 {
      guard ContinuousClock.now < end, !Task.isCancelled else { return false }
      try? await Task.sleep(for: min(.milliseconds(20), end - ContinuousClock.now))
    }
    return true
  }
}
