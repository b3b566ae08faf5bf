import Glibc
import Synchronization

/// The content-addressed on-disk cache: immutable content by SHA-256, one record per
/// normalized URL, safe across crashes and processes.
///
/// It knows nothing of HTTP transfers: the pipeline hands it validated files and headers.
/// Reads take no lock (content is immutable and checked by size on every read); record writes
/// and sweeps take the directory's advisory lock.
public final class AttachmentCache: Sendable {
  /// The cache's settings.
  public let configuration: CacheConfiguration
  let layout: CacheLayout
  let lock: FileLock
  private let writtenSinceSweep = Atomic<Int64>(0)
  private let sweeping = Atomic<Bool>(false)

  /// Opens (creating if needed) the cache in `configuration.directory`, and removes temporary
  /// files abandoned by processes that no longer run.
  /// - Throws: `io_error` when the directory cannot be created, is not a directory, belongs to
  ///   another user or is writable by others.
  public init(configuration: CacheConfiguration) throws(AttachmentError) {
    self.configuration = configuration
    layout = CacheLayout(root: configuration.directory)
    lock = FileLock(path: layout.lockFile)
    try layout.prepare()
    removeAbandonedTemporaryFiles()
  }

  /// The directory where bodies in flight are written (same file system as the content).
  var temporaryDirectory: String { layout.temporary }

  // MARK: - Reading (the hit path)

  /// The entry for a URL key if its record is readable and its content has the recorded
  /// size. A damaged entry is dropped and reported as absent, never served.
  func entry(for key: URLKey) -> CacheEntry? {
    let digest = key.digest
    let recordPath = layout.recordPath(digest: digest)
    guard let bytes = FileSystem.readSmallFile(recordPath) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let record = CacheRecord(decoding: text[...]), record.url == key.normalized else {
      dropRecord(digest: digest, ifStill: bytes)
      return nil
    }
    let path = layout.contentPath(
      sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
    guard let info = FileSystem.info(path), info.size == record.validation.bytes else {
      dropRecord(digest: digest, ifStill: bytes)
      return nil
    }
    return CacheEntry(record: record, path: path, digest: digest)
  }

  /// Records a use of an entry for LRU, at most once a minute per entry (a write per hit
  /// would cost more than the hit).
  func touch(_ entry: CacheEntry, now: Double) {
    guard now - entry.record.lastAccess > 60 else { return }
    var record = entry.record
    record.lastAccess = now
    try? commit(record, digest: entry.digest)
  }

  // MARK: - Writing

  /// Publishes a validated file: links it into place by hash (identical content is stored
  /// once), then commits the record that makes it visible. The temporary file is consumed.
  /// - Returns: the entry now in the cache.
  /// - Throws: `io_error` (disk full, permissions); the cache stays as it was and the
  ///   temporary file is removed.
  func publish(
    file temporary: String, validation: Validation, key: URLKey, headers: ResponseHeaders,
    freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry {
    defer { unlink(temporary) }
    let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
    try placeContent(temporary, at: path, bytes: validation.bytes)
    let record = CacheRecord(
      url: key.normalized, validation: validation, etag: headers.etag,
      lastModified: headers.lastModified, date: headers.date, fetchedAt: now,
      freshUntil: now + freshness.lifetime, lastAccess: now)
    let digest = key.digest
    try commit(record, digest: digest)
    noteWritten(validation.bytes)
    return CacheEntry(record: record, path: path, digest: digest)
  }

  /// Moves a validated file that must not be kept (`no-store`) next to the content, outside
  /// the index, for the caller to take; maintenance removes it after the grace period.
  func stash(file temporary: String, validation: Validation) throws(AttachmentError) -> String {
    let path = "\(layout.temporary)/unindexed-\(validation.sha256).\(validation.fileExtension)"
    guard rename(temporary, path) == 0 else {
      unlink(temporary)
      throw AttachmentError(
        .ioError, "Cannot move the file into the cache: \(String(cString: strerror(errno))).")
    }
    return path
  }

  /// Refreshes an entry after a `304 Not Modified`: new freshness and validators, same content.
  func refresh(
    _ entry: CacheEntry, headers: ResponseHeaders, freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry {
    var record = entry.record
    record.etag = headers.etag ?? record.etag
    record.lastModified = headers.lastModified ?? record.lastModified
    record.date = headers.date ?? record.date
    record.fetchedAt = now
    record.freshUntil = now + freshness.lifetime
    record.lastAccess = now
    try commit(record, digest: entry.digest)
    return CacheEntry(record: record, path: entry.path, digest: entry.digest)
  }

  /// Removes the record of a URL (its content goes at the next sweep if nothing else uses it).
  func remove(_ key: URLKey) {
    let digest = key.digest
    try? lock.withExclusiveLock { () throws(AttachmentError) in
      _ = unlink(layout.recordPath(digest: digest))
    }
  }

  private func placeContent(_ temporary: String, at path: String, bytes: Int64) throws(AttachmentError) {
    if configuration.durable {
      let fd = open(temporary, O_RDONLY | O_CLOEXEC)
      if fd >= 0 {
        fsync(fd)
        close(fd)
      }
    }
    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    try CacheLayout.makeDirectory(directory)
    if link(temporary, path) == 0 {
      if configuration.durable { FileSystem.syncDirectory(of: path) }
      return
    }
    guard errno == EEXIST else {
      throw AttachmentError(.ioError, "Cannot publish into the cache: \(String(cString: strerror(errno))).")
    }
    // Identical content is already there. If it is damaged (wrong size), replace it: the
    // rename is atomic, so readers see the old or the new file, never a partial one.
    if FileSystem.info(path)?.size == bytes {
      utimensat(AT_FDCWD, path, nil, 0)  // young again: a sweep's grace period covers it
      return
    }
    guard rename(temporary, path) == 0 || FileSystem.info(path)?.size == bytes else {
      throw AttachmentError(.ioError, "Cannot replace damaged content: \(String(cString: strerror(errno))).")
    }
  }

  private func commit(_ record: CacheRecord, digest: String) throws(AttachmentError) {
    let path = layout.recordPath(digest: digest)
    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    try CacheLayout.makeDirectory(directory)
    let bytes = Array(record.encoded().utf8)
    try lock.withExclusiveLock { () throws(AttachmentError) in
      try FileSystem.writeAtomically(
        bytes, to: path, temporaryDirectory: layout.temporary, durable: configuration.durable)
    }
  }

  /// Drops a record that failed its check, unless another writer replaced it meanwhile.
  private func dropRecord(digest: String, ifStill bytes: [UInt8]) {
    let path = layout.recordPath(digest: digest)
    try? lock.withExclusiveLock { () throws(AttachmentError) in
      if FileSystem.readSmallFile(path) == bytes { unlink(path) }
    }
  }

  private func noteWritten(_ bytes: Int64) {
    let total = writtenSinceSweep.add(bytes, ordering: .relaxed).newValue
    guard total >= configuration.sweepThreshold else { return }
    guard sweeping.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
      return
    }
    writtenSinceSweep.store(0, ordering: .relaxed)
    Task.detached(priority: .background) { [self] in
      _ = try? self.collectGarbage()
      self.sweeping.store(false, ordering: .releasing)
    }
  }

  func removeAbandonedTemporaryFiles() {
    let now = FileSystem.now()
    for name in FileSystem.names(in: layout.temporary) {
      let path = "\(layout.temporary)/\(name)"
      if TemporaryFile.isTemporary(name: name) {
        if TemporaryFile.isAbandoned(name: name) { unlink(path) }
      } else if name.hasPrefix("unindexed-"), let info = FileSystem.info(path),
        now - info.modified > configuration.gracePeriodSeconds
      {
        unlink(path)
      }
    }
  }
}
