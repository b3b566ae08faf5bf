import Glibc

/// Writing: body files for downloads, publishing a checked body (content linked by hash, the
/// record committed under the lock), stashing a `no-store` body, refreshing after a `304`.
extension AttachmentCache {
  /// A new file for a download's body, on the cache's file system (see ``CacheBodyFile``).
  /// The caller publishes, stashes or discards it.
  /// - Throws: `io_error` when no file can be created.
  func makeBodyFile() throws(AttachmentError) -> CacheBodyFile {
    if !swept.load(ordering: .relaxed) {
      // The first body file of this cache object: `tmp/` is checked (a hit never looks at it),
      // and what killed writers left there is removed.
      try ensureDirectory(layout.temporary)
      if !swept.exchange(true, ordering: .relaxed) { removeAbandonedBodyFiles() }
    }
    let anonymous = configuration.anonymousBodyFiles && !anonymousRefused.load(ordering: .relaxed)
    let (file, refused) = try CacheBodyFile.make(in: layout.temporary, anonymous: anonymous)
    if refused { anonymousRefused.store(true, ordering: .relaxed) }
    return file
  }

  /// Publishes a validated body: links it into place by hash (identical content is stored
  /// once) and commits the record that makes it visible, both under the lock, so no sweep
  /// can fall between them. The body file is consumed (discarded) in every case.
  /// - Parameters:
  ///   - body: the checked body file (consumed).
  ///   - validation: what the validator found it to be.
  ///   - key: the URL's cache key.
  ///   - validators: the response's validators and `Date`, for the record.
  ///   - peer: the class of the address the body came from (a policy fact).
  ///   - freshness: how long the origin lets the copy be served.
  ///   - now: the wall clock at the response, in seconds since 1970.
  /// - Returns: the entry now in the cache.
  /// - Throws: `io_error` (disk full, permissions, an unsafe directory); the cache stays as
  ///   it was.
  func publish(
    body: CacheBodyFile, validation: Validation, key: URLKey, validators: StoredValidators,
    peer: PeerAddressClass?, freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry {
    defer { body.discard() }
    if configuration.durable { fsync(body.descriptor) }
    let record = CacheRecord(
      url: key.normalized, validation: validation, peer: peer, etag: validators.etag,
      lastModified: validators.lastModified, date: validators.date, fetchedAt: now,
      freshUntil: now + freshness.lifetime, lastAccess: now, cacheControl: validators.cacheControl,
      expires: validators.expires, source: validators.source)
    return try commit(body, record: record, key: key)
  }

  /// Links `body` into place by its record's hash and writes `record` (sealed by the content
  /// now in place) as the entry of `key`, both under the lock: the one way an entry becomes
  /// visible, for a download (``publish(body:validation:key:validators:peer:freshness:now:)``)
  /// and for a copy another tier held (``adopt(_:record:key:now:)``). The caller syncs and
  /// discards the body.
  /// - Returns: the entry now in the cache.
  /// - Throws: `io_error`; the cache stays as it was (linked content is an orphan the sweep
  ///   removes after the grace period).
  func commit(_ body: CacheBodyFile, record: CacheRecord, key: URLKey) throws(AttachmentError) -> CacheEntry {
    var record = record
    let validation = record.validation
    let digest = recordKey.name(for: key)
    let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
    // Checked before the lock, to keep its hold short: a fan-out directory made once does not
    // change, and the checks are repeated (by failing) if it did.
    try ensureDirectory(layout.contentDirectory(sha256: validation.sha256))
    let ledger = try lock.withExclusiveLockedFile { (lockFile) throws(AttachmentError) -> Int64? in
      let added = try placeContent(body, at: path, bytes: validation.bytes)
      // The content's seal, read now that it is in place (linking and dating it changed it).
      record.seal = ContentSeal(path: path)
      do throws(AttachmentError) {
        try writeRecord(record, digest: digest)
      } catch {
        // The content stays (an orphan the sweep removes after the grace period); the ledger
        // still counts what was linked.
        _ = CacheLedger.add(lockFile, added)
        throw error
      }
      return CacheLedger.add(lockFile, added)
    }
    noteWritten(validation.bytes, ledger: ledger)
    return CacheEntry(record: record, path: path, digest: digest)
  }

  /// Gives a validated body that must not be kept (`no-store`) a name of its own next to the
  /// content, outside the index, for this caller alone to take. Its bytes count in the size
  /// ledger (so a cache full of them sweeps, and evicts indexed content to make room) until
  /// the caller releases it (``releaseUnindexed(_:)``) or, for a caller that never does (the
  /// command line hands the path to a script), maintenance removes it after the grace period.
  /// The body file is consumed.
  /// - Throws: `io_error` when it cannot be linked.
  func stash(body: CacheBodyFile, validation: Validation) throws(AttachmentError) -> String {
    defer { body.discard() }
    for _ in 0..<4 {
      let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
      let path =
        "\(layout.temporary)/\(Self.unindexedPrefix)\(validation.sha256)-\(token).\(validation.fileExtension)"
      if Self.link(body, to: path) == 0 {
        let ledger = try? lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Int64? in
          CacheLedger.add(fd, validation.bytes)
        }
        noteWritten(validation.bytes, ledger: ledger ?? nil)
        return path
      }
      guard errno == EEXIST else { break }
    }
    throw AttachmentError(
      .ioError, "Cannot move the file into the cache: \(String(cString: strerror(errno))).")
  }

  /// The name prefix of stashed (`no-store`) bodies in `tmp/`.
  static let unindexedPrefix = "unindexed-"

  /// Removes a stashed (`no-store`) body its caller is done with, and takes its bytes out of
  /// the size ledger. A path that is not a stashed body of this cache is left alone; one
  /// already gone is not an error (a sweep after the grace period took it).
  /// - Returns: whether the file was removed by this call.
  @discardableResult
  func releaseUnindexed(_ path: String) -> Bool {
    let prefix = "\(layout.temporary)/\(Self.unindexedPrefix)"
    guard path.hasPrefix(prefix), !path.dropFirst(prefix.count).contains("/") else { return false }
    return
      (try? lock.withExclusiveLockedFile { fd throws(AttachmentError) -> Bool in
        guard case .file(let size, _) = CacheFiles.find(path: path), unlink(path) == 0 else { return false }
        _ = CacheLedger.add(fd, -size)
        return true
      }) ?? false
  }

  /// Refreshes an entry after a `304 Not Modified`: new freshness and validators, same
  /// content. Under the lock the record is re-read: when another process meanwhile stored
  /// different content for the URL, its record stays and is answered instead.
  /// - Returns: the refreshed entry, or `nil` when its content was removed meanwhile (a sweep
  ///   of another process): the caller fetches again.
  /// - Throws: `io_error` when the record cannot be written.
  func refresh(
    _ entry: CacheEntry, validators: StoredValidators, freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry? {
    try lock.withExclusiveLock { () throws(AttachmentError) -> CacheEntry? in
      let current = currentRecord(digest: entry.digest)
      if let current, current.validation.sha256 != entry.record.validation.sha256,
        let other = healthyEntry(current, digest: entry.digest)
      {
        return other
      }
      guard case .file(let size, _) = CacheFiles.find(path: entry.path), size == entry.record.validation.bytes
      else { return nil }
      CacheFiles.setModified(entry.path, to: FileSystem.now())  // in use again: no sweep takes it now
      var record =
        current?.validation.sha256 == entry.record.validation.sha256 ? current ?? entry.record : entry.record
      record.etag = validators.etag ?? record.etag
      record.lastModified = validators.lastModified ?? record.lastModified
      record.date = validators.date ?? record.date
      record.cacheControl = validators.cacheControl ?? record.cacheControl
      record.expires = validators.expires ?? record.expires
      record.source = validators.source
      record.fetchedAt = now
      record.freshUntil = now + freshness.lifetime
      record.lastAccess = now
      record.seal = ContentSeal(path: entry.path)  // re-dating the content changed it
      try writeRecord(record, digest: entry.digest)
      return CacheEntry(record: record, path: entry.path, digest: entry.digest)
    }
  }

  // MARK: - Under the lock

  /// Links the body at `path` (lock held). Identical content already there is kept and made
  /// young again; damaged content (wrong size, a link, a FIFO, another user's file) is
  /// replaced atomically. The content's modification time is set to now, read under the
  /// lock: a sweep that started before spares it.
  /// - Returns: the bytes this added to the cache's content (for the ledger): `bytes` for a
  ///   new file, 0 when identical content was there, the difference when damaged content was
  ///   replaced.
  func placeContent(_ body: CacheBodyFile, at path: String, bytes: Int64) throws(AttachmentError)
    -> Int64
  {
    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    if Self.link(body, to: path) == 0 {
      CacheFiles.setModified(path, to: FileSystem.now())
      if configuration.durable { FileSystem.syncDirectory(of: path) }
      return bytes
    }
    guard errno == EEXIST else {
      throw AttachmentError(.ioError, "Cannot publish into the cache: \(String(cString: strerror(errno))).")
    }
    var replaced: Int64 = 0
    if case .file(let size, _) = CacheFiles.find(path: path) {
      if size == bytes {
        CacheFiles.setModified(path, to: FileSystem.now())
        return 0
      }
      replaced = size
    }
    // Damaged: readers see the old or the new file, never a partial one.
    try Self.place(body, at: path, through: "\(directory)/.replace-", what: "replace damaged content")
    CacheFiles.setModified(path, to: FileSystem.now())
    return bytes - replaced
  }

  /// Makes `path` name the body file: `linkat` of an anonymous file (through
  /// `/proc/self/fd`, else `AT_EMPTY_PATH`), `link` of a named one. Returns 0 or -1 (errno).
  /// Puts `file` at `path`, replacing what is there atomically: links it under a random name
  /// starting with `prefix` (on the same file system), then renames that over `path`.
  /// - Throws: `io_error` naming `what` failed.
  static func place(
    _ file: CacheBodyFile, at path: String, through prefix: String, what: String
  ) throws(AttachmentError) {
    let temporary = prefix + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    guard link(file, to: temporary) == 0 else {
      throw AttachmentError(.ioError, "Cannot \(what): \(String(cString: strerror(errno))).")
    }
    guard rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw AttachmentError(.ioError, "Cannot \(what): \(reason).")
    }
  }

  static func link(_ body: CacheBodyFile, to path: String) -> Int32 {
    guard body.isAnonymous else { return Glibc.link(body.path, path) }
    if linkat(AT_FDCWD, body.path, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 { return 0 }
    guard errno == ENOENT || errno == EPERM else { return -1 }
    let saved = errno
    if linkat(body.descriptor, "", AT_FDCWD, path, atEmptyPath) == 0 { return 0 }
    if errno == ENOENT || errno == EPERM { errno = saved }
    return -1
  }

  /// `AT_EMPTY_PATH`, which Glibc's module does not export.
  private static let atEmptyPath: Int32 = 0x1000

  /// Writes a record (lock held): one committed transaction of the record store, so readers
  /// see the old record or the new one.
  /// - Throws: `io_error` when the store cannot be written; it then holds the old record.
  func writeRecord(_ record: CacheRecord, digest: String) throws(AttachmentError) {
    let bytes = Array(record.encoded().utf8)
    try records.write(sync: configuration.durable) { (writer) throws(AttachmentError) in
      try writer.put(digest, bytes)
    }
  }

  /// Makes sure a directory of the cache (`tmp`, a content fan-out directory) exists and is
  /// safe before writing into it: a missing one is made (with its parent), a file or link in
  /// its place is replaced by a directory.
  /// - Throws: `io_error` when it belongs to another user or is writable by others.
  func ensureDirectory(_ path: String) throws(AttachmentError) {
    var info = stat()
    if lstat(path, &info) == 0 {
      if info.st_mode & S_IFMT == S_IFDIR {
        if let problem = CacheFiles.directoryProblem(info, groupWritableAllowed: false) {
          throw AttachmentError(.ioError, "The cache directory \(path) \(problem).")
        }
        return
      }
      unlink(path)
    }
    try CacheLayout.makeDirectory(path)
  }
}
