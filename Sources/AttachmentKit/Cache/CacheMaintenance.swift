import Glibc

/// Stats, verification, garbage collection and clearing.
///
/// A sweep reads the records and the content directory without the lock, decides, then applies its removals under
/// the lock in short slices (``CacheConfiguration/sweepSliceOperations`` at a time), so a
/// publish or a hit's LRU update waits at most one slice. Each removal is re-checked under
/// the lock: a record is removed only if it still holds the bytes the sweep read, and content
/// only if nothing published or refreshed it since the sweep began (its modification time,
/// set under the lock by every publish, is older than the sweep's start, also read under the
/// lock). One sweeper decides at a time per process; sweeps of several processes may
/// interleave slices, and every removal stays safe because of those re-checks.
extension AttachmentCache {
  /// What is in the cache, without re-hashing anything or taking the lock.
  /// - Throws: never today; kept throwing for future checks.
  public func stats() throws(AttachmentError) -> CacheReport {
    var report = CacheReport()
    let scan = scanRecords()
    report.entries = scan.records.count
    let content = scanContent()
    report.contentFiles = content.files.count
    report.bytes = content.files.values.reduce(0) { $0 + $1.size }
    report.temporaryFiles = CacheFiles.names(inDirectory: layout.temporary).count
    return report
  }

  /// Checks every entry: each record must parse and point at content of the recorded size
  /// and SHA-256. Damaged entries are removed (and refetched on their next request), as are
  /// symbolic links, FIFOs and other users' files inside the cache, unsafe fan-out
  /// directories, orphan content older than the grace period, abandoned body files and an
  /// old-format (`v1`) tree.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func verify() throws(AttachmentError) -> CacheReport {
    try sweep(rehash: true, evictTo: nil)
  }

  /// Brings the cache under its size limit: when it holds more than
  /// ``CacheConfiguration/maximumBytes``, evicts least recently used entries down to the low
  /// watermark, then removes content no record uses (older than the grace period), damaged
  /// records and abandoned temporary files.
  /// - Parameter maximumBytes: a limit for this run instead of the configured one.
  /// - Returns: what remains and what was removed.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func collectGarbage(maximumBytes: Int64? = nil) throws(AttachmentError) -> CacheReport {
    try sweep(rehash: false, evictTo: maximumBytes ?? configuration.maximumBytes)
  }

  /// ``collectGarbage(maximumBytes:)``, running `planned` once the sweep has read the cache and
  /// decided, before it applies any removal: the moment a publish or an LRU touch of another
  /// caller may land, made deterministic for tests of the sweep's re-checks.
  package func collectGarbage(maximumBytes: Int64?, planned: () -> Void) throws(AttachmentError)
    -> CacheReport
  {
    try sweep(rehash: false, evictTo: maximumBytes ?? configuration.maximumBytes, planned: planned)
  }

  /// Removes every entry, all content, temporary files of finished writers and any
  /// old-format tree.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func clear() throws(AttachmentError) -> CacheReport {
    var report = CacheReport()
    // Every record at once (one transaction), before the content they point at.
    report.removed = try lock.withExclusiveLock { () throws(AttachmentError) -> Int in
      try records.write(sync: configuration.durable) { writer in
        writer.removeAll(except: [CacheRecordKey.storedName])
      }
    }
    var operations: [() -> Int] = []
    for path in scanContent().files.keys { operations.append { unlink(path) == 0 ? 1 : 0 } }
    for root in layout.legacy { operations.append { CacheFiles.removeTree(root) } }
    report.removed += try applyInSlices(operations)
    report.removed += try lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int in
      CacheLedger.forget(fd)  // what publishes added meanwhile is unknown: the next sweep counts
      return removeTemporaryFiles(now: FileSystem.now(), grace: 0).removed
    }
    report.temporaryFiles = CacheFiles.names(inDirectory: layout.temporary).count
    return report
  }

  // MARK: - The sweep

  private func sweep(rehash: Bool, evictTo limit: Int64?, planned: () -> Void = {}) throws(AttachmentError)
    -> CacheReport
  {
    // Every publish links and commits under the lock, so reading the clock under it splits
    // them cleanly: finished before (the scan sees the record) or stamped after `start`. The
    // ledger is read (or started at 0) at the same moment, so what it gains until the end is
    // exactly what was published meanwhile.
    let (start, ledgerAtStart) = try lock.withExclusiveLockedFile {
      fd throws(AttachmentError) -> (Double, Int64) in
      guard let known = CacheLedger.read(fd) else {
        CacheLedger.write(fd, 0)
        return (FileSystem.now(), 0)
      }
      return (FileSystem.now(), known)
    }
    let scan = sweepScan(rehash: rehash)
    // Stashed bodies in use cannot be evicted: indexed content makes room for them instead.
    let inUse = unindexedBytesInUse(now: FileSystem.now())
    let plan = SweepPlan(
      scan: scan, layout: layout, limit: limit.map { max(0, $0 - inUse) },
      lowWatermark: configuration.lowWatermark,
      gracePeriod: configuration.gracePeriodSeconds)
    planned()
    // Content bytes the removals took away, for the ledger (summed as they run).
    var removedBytes: Int64 = 0
    var report = CacheReport()
    report.removed = try applyInSlices(
      plan.steps.map { step in
        let operation = self.operation(step, startedAt: start)
        return {
          let (files, bytes) = operation()
          removedBytes += bytes
          return files
        }
      })
    // What the scan found, less what was removed, plus what was published meanwhile: an upper
    // bound of the content now (a publish during the scan may be counted twice).
    let left = scan.content.values.reduce(Int64(0), +) - removedBytes
    // Stashed (no-store) bodies still in use count too: they are on the disk the cap is for.
    let temporary = try lock.withExclusiveLockedFile {
      fd throws(AttachmentError) -> (removed: Int, left: Int, unindexedBytes: Int64) in
      let publishedMeanwhile = max(0, (CacheLedger.read(fd) ?? ledgerAtStart) - ledgerAtStart)
      let temporary = removeTemporaryFiles(now: FileSystem.now(), grace: configuration.gracePeriodSeconds)
      CacheLedger.write(fd, left + publishedMeanwhile + temporary.unindexedBytes)
      return temporary
    }
    report.removed += temporary.removed
    report.temporaryFiles = temporary.left
    report.corrupt = plan.corrupt
    report.evicted = plan.evicted
    report.entries = plan.entries
    report.contentFiles = plan.contentFiles
    report.bytes = plan.bytes
    return report
  }

  /// What a sweep reads before it plans: older roots, unsafe shards, the records, the content
  /// and, for a rehash, whether each content file used by a record hashes to its name.
  private func sweepScan(rehash: Bool) -> SweepPlan.Scan {
    var scan = SweepPlan.Scan()
    scan.legacyRoots = layout.legacy.filter { CacheFiles.find(path: $0) != .missing }
    scan.unsafeShards = unsafeShards().map { ($0, CacheFiles.find(path: $0) == .missing) }
    let records = scanRecords(remembering: !rehash)
    scan.records = records.records.map { (digest: $0.0, bytes: $0.1, record: $0.2) }
    scan.unreadable = records.unreadable.map { (digest: $0.0, found: $0.1) }
    let content = scanContent()
    scan.content = content.files.mapValues(\.size)
    scan.damagedContent = content.damaged
    scan.strayContent = content.strays
    guard rehash else { return scan }
    for (_, _, record) in scan.records {
      let validation = record.validation
      let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
      guard scan.content[path] == validation.bytes, scan.hashMatches[path] == nil else { continue }
      scan.hashMatches[path] =
        SHA256Hasher.hashFile(atPath: path, extraFlags: O_NOFOLLOW | O_NONBLOCK)?.digest == validation.sha256
    }
    return scan
  }

  /// The removal a plan's step stands for (run under the lock): it answers how many files it
  /// removed and how many bytes of content that took out of the size ledger.
  private func operation(_ step: SweepPlan.Step, startedAt start: Double) -> () -> (Int, Int64) {
    switch step {
    case .removeTree(let root):
      return { (CacheFiles.removeTree(root), 0) }
    case .repairShard(let directory):
      return {
        var info = stat()
        guard
          lstat(directory, &info) != 0
            || CacheFiles.directoryProblem(info, groupWritableAllowed: false) != nil
        else { return (0, 0) }
        let removed = CacheFiles.removeTree(directory)
        mkdir(directory, 0o700)
        return (removed, 0)
      }
    case .removeRecord(let digest, let found):
      let remove = removeRecord(digest: digest, ifStill: found)
      return { (remove(), 0) }
    case .removeContent(let path, let grace, let sha256, let counted):
      let remove = removeContent(path, startedAt: start, grace: grace, sha256: sha256)
      return {
        let removed = remove()
        return (removed, removed > 0 ? counted : 0)
      }
    case .evict(let digest, let bytes, let path, let removingContent, let counted):
      // The record goes if unchanged; its content only with it, when it was the last user.
      let record = removeRecord(digest: digest, ifStill: .bytes(bytes))
      let content = removeContent(path, startedAt: start, grace: nil, sha256: nil)
      return {
        let removed = record()
        guard removed > 0, removingContent else { return (removed, 0) }
        let gone = content()
        return (removed + gone, gone > 0 ? counted : 0)
      }
    }
  }

  /// Runs removals under the lock, a slice at a time. Returns how many files they removed.
  private func applyInSlices(_ operations: [() -> Int]) throws(AttachmentError) -> Int {
    var removed = 0
    var next = 0
    let slice = max(1, configuration.sweepSliceOperations)
    while next < operations.count {
      let end = min(operations.count, next + slice)
      removed += try lock.withExclusiveLock { () throws(AttachmentError) -> Int in
        operations[next..<end].reduce(0) { $0 + $1() }
      }
      next = end
    }
    return removed
  }

  /// Removes a record if it still holds what the sweep read (lock held when run).
  private func removeRecord(digest: String, ifStill expected: RecordStore.Found) -> () -> Int {
    return {
      let removed = try? self.records.write(sync: self.configuration.durable) { writer -> Bool in
        let now = writer.read(digest)
        guard now == expected || (expected == .damaged && now != .missing && !Self.parses(now)) else {
          return false
        }
        return writer.remove(digest)
      }
      return removed == true ? 1 : 0
    }
  }

  private static func parses(_ read: RecordStore.Found) -> Bool {
    guard case .bytes(let bytes) = read else { return false }
    return CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...]) != nil
  }

  /// Removes a content file (lock held when run) unless a publish or refresh stamped it
  /// since the sweep began, or it is younger than `grace` seconds. Anything that is not a
  /// regular file of this user goes regardless. With `sha256`, a stamped file is re-hashed
  /// and removed only if it still does not match.
  private func removeContent(_ path: String, startedAt start: Double, grace: Double?, sha256: String?)
    -> () -> Int
  {
    return {
      switch CacheFiles.find(path: path) {
      case .missing: return 0
      case .damaged: return unlink(path) == 0 ? 1 : 0
      case .file(_, let modified):
        let now = FileSystem.now()
        if let grace, now - modified <= grace { return 0 }
        if modified >= start {
          guard let sha256,
            SHA256Hasher.hashFile(atPath: path, extraFlags: O_NOFOLLOW | O_NONBLOCK)?.digest != sha256
          else { return 0 }
        }
        return unlink(path) == 0 ? 1 : 0
      }
    }
  }

  /// The bytes of stashed (`no-store`) bodies younger than the grace period: in use by a
  /// caller, or left for one (the command line's), so not removable yet.
  func unindexedBytesInUse(now: Double) -> Int64 {
    CacheFiles.names(inDirectory: layout.temporary).reduce(Int64(0)) { total, name in
      guard name.hasPrefix(Self.unindexedPrefix),
        case .file(let size, let modified) = CacheFiles.find(path: "\(layout.temporary)/\(name)"),
        now - modified <= configuration.gracePeriodSeconds
      else { return total }
      return total + size
    }
  }

  /// Removes temporary files no live writer owns (lock held): body files whose lock can be
  /// taken, unindexed files older than `grace`, and anything else (record files of older
  /// versions). Returns how many were removed and how many are left.
  func removeTemporaryFiles(now: Double, grace: Double) -> (removed: Int, left: Int, unindexedBytes: Int64) {
    var removed = 0
    var left = 0
    var unindexedBytes: Int64 = 0
    for name in CacheFiles.names(inDirectory: layout.temporary) {
      let path = "\(layout.temporary)/\(name)"
      var abandoned = false
      if name.hasPrefix(CacheBodyFile.prefix) {
        abandoned = CacheBodyFile.isAbandoned(name: name, in: layout.temporary, now: now)
      } else if name.hasPrefix(Self.unindexedPrefix) {
        if case .file(let size, let modified) = CacheFiles.find(path: path) {
          abandoned = now - modified > grace
          if !abandoned { unindexedBytes += size }
        } else {
          abandoned = true
        }
      } else {
        abandoned = true  // nothing else belongs here
      }
      if abandoned, unlink(path) == 0 { removed += 1 } else { left += 1 }
    }
    return (removed, left, unindexedBytes)
  }
}
