/// When a publish starts the automatic sweep: the bytes written since the last one, the size
/// ledger, and one sweep at a time per cache object (inline, or in the background).
extension AttachmentCache {
  /// Counts `bytes` just published and starts a sweep if one is due.
  func noteWritten(_ bytes: Int64, ledger: Int64?) {
    writtenSinceSweep.add(bytes, ordering: .sequentiallyConsistent)
    sweepIfDue(ledger: ledger)
  }

  /// Whether an automatic sweep is due. With a known ledger: when the cache holds more than
  /// ``CacheConfiguration/maximumBytes`` and this process wrote at least an eighth of the
  /// sweep threshold since its last sweep (so a cache a sweep could not bring under its limit,
  /// young orphans say, is not rescanned on every publish). Without one (a new or old-format
  /// lock file, after `clear`): when a threshold's worth was written since the last sweep.
  func isDue(ledger: Int64?) -> Bool {
    let written = writtenSinceSweep.load(ordering: .sequentiallyConsistent)
    guard let ledger else { return written >= configuration.sweepThreshold }
    return ledger > configuration.maximumBytes && written >= max(1, configuration.sweepThreshold / 8)
  }

  /// The ledger now (taking the lock briefly), or `nil` when it is unknown or the lock fails.
  func currentLedger() -> Int64? {
    (try? lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int64? in CacheLedger.read(fd) })
      ?? nil
  }

  /// Starts the automatic sweep when one is due (``isDue(ledger:)``) and no sweep of this
  /// cache object is running (inline or in the background, per
  /// ``CacheConfiguration/sweepsInBackground``).
  func sweepIfDue(ledger: Int64?) {
    guard isDue(ledger: ledger) else { return }
    guard
      sweeping.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged
    else { return }
    guard configuration.sweepsInBackground else {
      sweepWhileDue()
      return
    }
    Task.detached(priority: .background) { [self] in self.sweepWhileDue() }
  }

  /// Sweeps until no sweep is due any more (what is published while a sweep runs is not in
  /// its scan, but is in the ledger), then lets the next publish start one.
  func sweepWhileDue() {
    repeat {
      writtenSinceSweep.store(0, ordering: .sequentiallyConsistent)
      _ = try? collectGarbage()
    } while isDue(ledger: currentLedger())
    sweeping.store(false, ordering: .sequentiallyConsistent)
    // A publish that made a sweep due just before `sweeping` was cleared started nothing.
    sweepIfDue(ledger: currentLedger())
  }
}
