import Glibc

/// Stats, verification, garbage collection and clearing.
///
/// A sweep reads the directory without the lock, decides, then applies its removals under
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

  /// Removes every entry, all content, temporary files of finished writers and any
  /// old-format tree.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func clear() throws(AttachmentError) -> CacheReport {
    var report = CacheReport()
    var operations: [() -> Int] = []
    for (digest, _, _) in scanRecords().records {
      let path = layout.recordPath(digest: digest)
      operations.append { unlink(path) == 0 ? 1 : 0 }
    }
    for path in scanContent().files.keys { operations.append { unlink(path) == 0 ? 1 : 0 } }
    for name in scanRecords().unreadable.map(\.0) {
      let path = layout.recordPath(digest: name)
      operations.append { unlink(path) == 0 ? 1 : 0 }
    }
    for root in layout.legacy { operations.append { CacheFiles.removeTree(root) } }
    report.removed = try applyInSlices(operations)
    report.removed += try lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int in
      CacheLedger.forget(fd)  // what publishes added meanwhile is unknown: the next sweep counts
      return removeTemporaryFiles(now: FileSystem.now(), grace: 0).removed
    }
    report.temporaryFiles = CacheFiles.names(inDirectory: layout.temporary).count
    return report
  }

  // MARK: - The sweep

  private struct LiveEntry {
    var digest: String
    var bytes: [UInt8]
    var record: CacheRecord
    var path: String
  }

  private func sweep(rehash: Bool, evictTo limit: Int64?) throws(AttachmentError) -> CacheReport {
    var report = CacheReport()
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
    var operations: [() -> Int] = []

    for root in layout.legacy where CacheFiles.find(path: root) != .missing {
      operations.append { CacheFiles.removeTree(root) }
    }
    for directory in unsafeShards() {
      // A missing fan-out directory (a crash while the cache was being made) is simply made;
      // a link, a file or an unsafe directory in its place is damage.
      let missing = CacheFiles.find(path: directory) == .missing
      if !missing { report.corrupt += 1 }
      operations.append {
        var info = stat()
        guard
          lstat(directory, &info) != 0
            || CacheFiles.directoryProblem(info, groupWritableAllowed: false) != nil
        else { return 0 }
        let removed = CacheFiles.removeTree(directory)
        mkdir(directory, 0o700)
        return removed
      }
    }

    let scan = scanRecords(remembering: !rehash)
    let content = scanContent()
    // Content bytes the removals below took away, for the ledger (summed as they run).
    var removedBytes: Int64 = 0
    func counted(_ path: String, _ removal: @escaping () -> Int) -> () -> Int {
      let size = content.files[path]?.size ?? 0
      return {
        let removed = removal()
        if removed > 0 { removedBytes += size }
        return removed
      }
    }
    for (digest, found) in scan.unreadable {
      report.corrupt += 1
      operations.append(removeRecord(digest: digest, ifStill: found))
    }
    for path in content.damaged {
      report.corrupt += 1
      operations.append(removeContent(path, startedAt: start, grace: nil, sha256: nil))
    }
    for path in content.strays {
      operations.append(removeContent(path, startedAt: start, grace: 3_600, sha256: nil))
    }

    var live: [LiveEntry] = []
    var hashed: [String: Bool] = [:]
    for (digest, bytes, record) in scan.records {
      let validation = record.validation
      let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
      var healthy = content.files[path]?.size == validation.bytes
      var wrongHash = false
      if healthy, rehash {
        if hashed[path] == nil {
          hashed[path] =
            SHA256Hasher.hashFile(atPath: path, extraFlags: O_NOFOLLOW | O_NONBLOCK)?.digest
            == validation.sha256
        }
        healthy = hashed[path] == true
        wrongHash = !healthy
      }
      if healthy {
        live.append(LiveEntry(digest: digest, bytes: bytes, record: record, path: path))
      } else {
        report.corrupt += 1
        operations.append(removeRecord(digest: digest, ifStill: .bytes(bytes)))
        if wrongHash {
          operations.append(
            counted(path, removeContent(path, startedAt: start, grace: nil, sha256: validation.sha256)))
        }
      }
    }

    var used: [String: Int] = [:]
    var evictedContent: Set<String> = []
    for entry in live { used[entry.path, default: 0] += 1 }
    var total = used.keys.reduce(Int64(0)) { $0 + (content.files[$1]?.size ?? 0) }
    if let limit, total > limit {
      let target = Int64(Double(limit) * configuration.lowWatermark)
      live.sort { $0.record.lastAccess < $1.record.lastAccess }
      var kept: [LiveEntry] = []
      for entry in live {
        guard total > target else {
          kept.append(entry)
          continue
        }
        report.evicted += 1
        used[entry.path, default: 1] -= 1
        let lastUse = used[entry.path] == 0
        if lastUse {
          used[entry.path] = nil
          evictedContent.insert(entry.path)
          total -= content.files[entry.path]?.size ?? 0
        }
        operations.append(evict(entry, removingContent: lastUse, startedAt: start, counted: counted))
      }
      live = kept
    }
    // Content of an evicted entry goes with its record, or not at all: when the record changed
    // since the scan (a touch, a new publish), the eviction is refused and its content stays.
    for (path, _) in content.files
    where used[path] == nil && !hashed.keys.contains(path) && !evictedContent.contains(path) {
      operations.append(
        counted(
          path, removeContent(path, startedAt: start, grace: configuration.gracePeriodSeconds, sha256: nil)))
    }

    report.removed = try applyInSlices(operations)
    // What the scan found, less what was removed, plus what was published meanwhile: an upper
    // bound of the content now (a publish during the scan may be counted twice).
    let left = content.files.values.reduce(Int64(0)) { $0 + $1.size } - removedBytes
    let temporary = try lock.withExclusiveLockedFile {
      fd throws(AttachmentError) -> (removed: Int, left: Int) in
      let publishedMeanwhile = max(0, (CacheLedger.read(fd) ?? ledgerAtStart) - ledgerAtStart)
      CacheLedger.write(fd, left + publishedMeanwhile)
      return removeTemporaryFiles(now: FileSystem.now(), grace: configuration.gracePeriodSeconds)
    }
    report.removed += temporary.removed
    report.temporaryFiles = temporary.left
    report.entries = live.count
    report.contentFiles = used.count
    report.bytes = used.keys.reduce(0) { $0 + (content.files[$1]?.size ?? 0) }
    return report
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
  private func removeRecord(digest: String, ifStill expected: CacheFiles.RecordBytes) -> () -> Int {
    let path = layout.recordPath(digest: digest)
    return {
      let now = CacheFiles.readRecord(path: path)
      guard now == expected || (expected == .damaged && now != .missing && !Self.parses(now)) else {
        return 0
      }
      return unlink(path) == 0 ? 1 : 0
    }
  }

  private static func parses(_ read: CacheFiles.RecordBytes) -> Bool {
    guard case .bytes(let bytes) = read else { return false }
    return CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...]) != nil
  }

  /// Evicts an entry if its record is unchanged, and its content when it was the last user.
  private func evict(
    _ entry: LiveEntry, removingContent: Bool, startedAt start: Double,
    counted: (String, @escaping () -> Int) -> () -> Int
  ) -> () -> Int {
    let record = removeRecord(digest: entry.digest, ifStill: .bytes(entry.bytes))
    let content = counted(entry.path, removeContent(entry.path, startedAt: start, grace: nil, sha256: nil))
    return {
      let removed = record()
      guard removed > 0 else { return 0 }
      return removingContent ? removed + content() : removed
    }
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

  /// Removes temporary files no live writer owns (lock held): record temporaries and
  /// prepared records' names (their writers hold the lock), body files whose lock can be taken, unindexed files older than
  /// `grace`. Returns how many were removed and how many are left.
  func removeTemporaryFiles(now: Double, grace: Double) -> (removed: Int, left: Int) {
    var removed = 0
    var left = 0
    for name in CacheFiles.names(inDirectory: layout.temporary) {
      let path = "\(layout.temporary)/\(name)"
      var abandoned = false
      if name.hasPrefix(CacheBodyFile.prefix) {
        abandoned = CacheBodyFile.isAbandoned(name: name, in: layout.temporary, now: now)
      } else if TemporaryFile.isTemporary(name: name) || name.hasPrefix(Self.preparedRecordPrefix) {
        abandoned = true  // made and renamed only under the lock this sweep holds
      } else if name.hasPrefix("unindexed-") {
        if case .file(_, let modified) = CacheFiles.find(path: path) {
          abandoned = now - modified > grace
        } else {
          abandoned = true
        }
      } else {
        abandoned = true  // nothing else belongs here
      }
      if abandoned, unlink(path) == 0 { removed += 1 } else { left += 1 }
    }
    return (removed, left)
  }
}
