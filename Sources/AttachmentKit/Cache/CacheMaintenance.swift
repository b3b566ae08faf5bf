import Glibc

/// Stats, verification, garbage collection and clearing. Each takes the cache's lock, so one
/// sweeper runs at a time across every process sharing the directory.
extension AttachmentCache {
  /// What is in the cache, without re-hashing anything.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func stats() throws(AttachmentError) -> CacheReport {
    try lock.withExclusiveLock { () throws(AttachmentError) -> CacheReport in
      var report = CacheReport()
      let scan = scanRecords()
      report.entries = scan.records.count
      let content = contentFiles()
      report.contentFiles = content.count
      report.bytes = content.values.reduce(0) { $0 + $1.size }
      report.temporaryFiles = FileSystem.names(in: layout.temporary).count
      return report
    }
  }

  /// Checks every entry: each record must parse and point at content of the recorded size
  /// and SHA-256. Damaged entries are removed (and refetched on their next request), orphan
  /// content older than the grace period and abandoned temporary files are removed.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func verify() throws(AttachmentError) -> CacheReport {
    try sweep(rehash: true, evictTo: nil)
  }

  /// Brings the cache under its size limit: when it holds more than
  /// ``CacheConfiguration/maximumBytes``, evicts least recently used entries down to the low
  /// watermark, then removes content no record uses (older than the grace period), damaged
  /// records and abandoned temporary files.
  /// - Parameter maximumBytes: a limit for this run instead of the configured one.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func collectGarbage(maximumBytes: Int64? = nil) throws(AttachmentError) -> CacheReport {
    try sweep(rehash: false, evictTo: maximumBytes ?? configuration.maximumBytes)
  }

  /// Removes every entry, all content and temporary files of finished processes.
  /// - Throws: `io_error` when the lock cannot be taken.
  public func clear() throws(AttachmentError) -> CacheReport {
    try lock.withExclusiveLock { () throws(AttachmentError) -> CacheReport in
      var report = CacheReport()
      for (digest, _) in scanRecords().records {
        if unlink(layout.recordPath(digest: digest)) == 0 { report.removed += 1 }
      }
      for (path, _) in contentFiles() where unlink(path) == 0 { report.removed += 1 }
      removeAbandonedTemporaryFiles()
      return report
    }
  }

  // MARK: - The sweep

  private func sweep(rehash: Bool, evictTo limit: Int64?) throws(AttachmentError) -> CacheReport {
    try lock.withExclusiveLock { () throws(AttachmentError) -> CacheReport in
      var report = CacheReport()
      let now = FileSystem.now()
      let scan = scanRecords()
      for digest in scan.unreadable {
        unlink(layout.recordPath(digest: digest))
        report.corrupt += 1
        report.removed += 1
      }
      var content = contentFiles()
      var live: [(digest: String, record: CacheRecord, path: String)] = []
      var checkedHashes: [String: Bool] = [:]
      for (digest, record) in scan.records {
        let path = layout.contentPath(
          sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
        var healthy = content[path]?.size == record.validation.bytes
        if healthy, rehash {
          if let known = checkedHashes[path] {
            healthy = known
          } else {
            let hashed = SHA256Hasher.hashFile(atPath: path)
            healthy = hashed?.digest == record.validation.sha256
            checkedHashes[path] = healthy
          }
        }
        if healthy {
          live.append((digest, record, path))
        } else {
          unlink(layout.recordPath(digest: digest))
          report.corrupt += 1
          report.removed += 1
          if content[path] != nil, unlink(path) == 0 {
            content[path] = nil
            report.removed += 1
          }
        }
      }

      var used: [String: Int] = [:]
      for entry in live { used[entry.path, default: 0] += 1 }
      var total = used.keys.reduce(Int64(0)) { $0 + (content[$1]?.size ?? 0) }
      if let limit, total > limit {
        let target = Int64(Double(limit) * configuration.lowWatermark)
        live.sort { $0.record.lastAccess < $1.record.lastAccess }
        var kept: [(digest: String, record: CacheRecord, path: String)] = []
        for entry in live {
          guard total > target else {
            kept.append(entry)
            continue
          }
          unlink(layout.recordPath(digest: entry.digest))
          report.evicted += 1
          report.removed += 1
          used[entry.path, default: 1] -= 1
          if used[entry.path] == 0 {
            used[entry.path] = nil
            total -= content[entry.path]?.size ?? 0
          }
        }
        live = kept
      }

      for (path, info) in content where used[path] == nil {
        // Young content may belong to a writer about to commit its record.
        if now - info.modified > configuration.gracePeriodSeconds, unlink(path) == 0 {
          content[path] = nil
          report.removed += 1
        }
      }
      let temporaryBefore = FileSystem.names(in: layout.temporary).count
      removeAbandonedTemporaryFiles()
      let temporaryAfter = FileSystem.names(in: layout.temporary).count
      report.removed += temporaryBefore - temporaryAfter
      report.temporaryFiles = temporaryAfter
      report.entries = live.count
      report.contentFiles = content.count
      report.bytes = content.values.reduce(0) { $0 + $1.size }
      return report
    }
  }

  /// Every record file: the parsed ones and the names of those that would not parse.
  private func scanRecords() -> (records: [(String, CacheRecord)], unreadable: [String]) {
    var records: [(String, CacheRecord)] = []
    var unreadable: [String] = []
    for shard in FileSystem.names(in: layout.index) {
      for name in FileSystem.names(in: "\(layout.index)/\(shard)") {
        let path = "\(layout.index)/\(shard)/\(name)"
        if let bytes = FileSystem.readSmallFile(path),
          let record = CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...])
        {
          records.append((name, record))
        } else {
          unreadable.append(name)
        }
      }
    }
    return (records, unreadable)
  }

  /// Every content file with its size and modification time.
  private func contentFiles() -> [String: (size: Int64, modified: Double)] {
    var files: [String: (size: Int64, modified: Double)] = [:]
    for first in FileSystem.names(in: layout.content) {
      for second in FileSystem.names(in: "\(layout.content)/\(first)") {
        let directory = "\(layout.content)/\(first)/\(second)"
        for name in FileSystem.names(in: directory) {
          let path = "\(directory)/\(name)"
          if let info = FileSystem.info(path) { files[path] = info }
        }
      }
    }
    return files
  }
}
