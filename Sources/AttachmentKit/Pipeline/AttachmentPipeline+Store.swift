import Dispatch

/// The shared tier of a miss (``SharedTier``: the object store of ``StoreConfiguration``, or
/// ``PipelineConfiguration/sharedTier``): after the local cache and before the origin. A key the
/// tier holds is read (within a bounded share of the deadline, every byte verified), adopted into
/// the local cache and answered from there, under the same policy as any local hit; a miss the
/// origin answered is written to the tier (the store does it in the background).
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

  /// Looks `url` up in the shared tier (when there is one), within its share of the time left
  /// to `deadline`, on a thread of its own; a verified copy is adopted into the local cache and
  /// judged as a local hit would be.
  func fromStore(
    _ url: AttachmentURL, deadline: ContinuousClock.Instant, start: ContinuousClock.Instant
  ) async -> StoreOutcome {
    guard let sharedTier else { return .nothing }
    let remaining = deadline - ContinuousClock.now
    let budget = store?.readBudget(remaining: remaining) ?? FleetStore.readBudget(remaining: remaining)
    guard budget > .milliseconds(1) else { return .nothing }
    let read = await OffPoolWork.run(deadline: deadline) { [self] _ -> TierRead in
      // The content goes straight into a body file of the local cache (constant memory).
      guard let body = try? cache.makeBodyFile() else { return .failed }
      let result = sharedTier.read(
        TierKey(url.key), into: body.descriptor, maximumBytes: transferLimit, budget: budget)
      guard case .found(let found) = result else {
        body.discard()
        return result
      }
      // Checked here too, whatever the tier promised: a conformer is not trusted to have.
      guard let hashed = SHA256Hasher.hashFile(atPath: body.path),
        hashed.digest == found.sha256, hashed.bytes == found.bytes
      else {
        body.discard()
        store?.log("a copy that does not match its record's SHA-256 was not used")
        return .failed
      }
      do throws(AttachmentError) {
        _ = try cache.adopt(body, record: found.record, key: url.key, now: FileSystem.now())
        return result
      } catch {
        store?.log("a verified copy could not be kept in the local cache: \(error.message)")
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
      // The request's time, the tier's reads included (the lookup timed itself alone).
      attachment.totalMicroseconds = Self.microseconds(since: start)
      return .answer(attachment)
    case .stale(let copy) where !copy.confirming: return .stale(copy.entry)
    case .stale, .refused, .miss: return .nothing
    }
  }

  /// Queues the shared tier's write of what a miss of `url` just published (fetched, rescued
  /// or revalidated), when there is a shared tier and the answer is indexed; never waits for it.
  func writeBehind(_ result: Result<Attachment, AttachmentError>, url: AttachmentURL) {
    guard let sharedTier, case .success(let attachment) = result, attachment.source != .cache,
      !attachment.isUnindexed, attachment.freshUntil != nil, let entry = tier.entry(for: url.key)
    else { return }
    let (shared, key, path) = (TierEntry(entry.record), TierKey(url.key), entry.path)
    // The store queues its writes, in order with the lease's release that follows (a waiter
    // that sees the release then finds the record); another tier's write may copy the whole
    // file (a second cache directory does): on a thread of its own, never in the answer's way.
    guard store == nil else { return sharedTier.write(shared, of: key, contentPath: path) }
    tierWrites.withLock { $0 += 1 }
    BackgroundWork.start("AttachmentKit.tier-write", qos: .utility) { [tierWrites] in
      sharedTier.write(shared, of: key, contentPath: path)
      tierWrites.withLock { $0 -= 1 }
    }
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
    guard let sharedTier else { return true }
    let end = ContinuousClock.now + timeout
    while sharedTier.pendingWrites + tierWrites.withLock({ $0 }) > 0 {
      guard ContinuousClock.now < end, !Task.isCancelled else { return false }
      try? await Task.sleep(for: min(.milliseconds(20), end - ContinuousClock.now))
    }
    return true
  }
}
