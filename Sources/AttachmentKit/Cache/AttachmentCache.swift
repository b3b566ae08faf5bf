import Glibc
import Synchronization

/// The content-addressed on-disk cache: immutable content files by SHA-256, and one record per
/// normalized URL in an LMDB store (`RecordStore`), safe across crashes and across processes
/// sharing the directory.
///
/// It knows nothing of HTTP transfers or of callers' policies: the pipeline hands it
/// validated files with the facts a policy needs, and judges those facts on every hit.
/// Reads take no lock and never wait (records are read from a memory map, content is immutable
/// and checked on every read; the LRU update of a hit only tries the lock). A publish links the
/// content and commits its record under the directory's advisory lock, so a sweep (which
/// mutates only under that lock, in short slices) cannot remove what a publish is returning.
public final class AttachmentCache: Sendable {
  /// The cache's settings.
  public let configuration: CacheConfiguration
  let layout: CacheLayout
  let lock: FileLock
  let writtenSinceSweep = Atomic<Int64>(0)
  let sweeping = Atomic<Bool>(false)
  /// Set once this cache has looked for abandoned body files (on its first miss).
  let swept = Atomic<Bool>(false)
  /// Set once the file system refused `O_TMPFILE`: named body files from then on.
  let anonymousRefused = Atomic<Bool>(false)
  /// What the last garbage collection read from the records, reused by the next.
  let scanMemory: RecordScanMemory
  /// The records hits decoded lately, with their bytes (a hit on unchanged bytes parses nothing).
  let decodedRecords: DecodedRecords
  /// The content fan-out directories hits looked into, held open.
  let contentDirectories: ContentDirectories
  /// The records, shared with every other cache object of this process on the same directory.
  let records: RecordStore
  /// Names the index records (read from, or made in, the record store).
  let recordKey: CacheRecordKey
  private let lookups = Atomic<Int>(0)

  /// How many lookups (record reads of ``entry(for:)``) this cache object has made: `serve`'s
  /// `attachkit_cache_lookups_total`, and how tests see that an input is looked up once.
  package var lookupCount: Int { lookups.load(ordering: .relaxed) }

  /// Opens (creating if needed) the cache in `configuration.directory`. Body files abandoned by
  /// writers that no longer run are removed by this cache's first miss (`makeBodyFile()`),
  /// at once when this opener writes named body files itself, and by every sweep: a process
  /// that only hits never lists the temporary directory.
  /// - Throws: `io_error` when the directory cannot be created, is not a directory (or is a
  ///   symbolic link), belongs to another user or is writable by others; the same for `v3`
  ///   (`tmp` and the content directories are checked by the first write into them); `io_error`
  ///   when the record store cannot be opened or created (a damaged one is replaced by an empty
  ///   store: its URLs become misses).
  public init(configuration: CacheConfiguration) throws(AttachmentError) {
    self.configuration = configuration
    layout = CacheLayout(root: configuration.directory)
    lock = FileLock(path: layout.lockFile)
    scanMemory = RecordScanMemory(capacity: configuration.rememberedRecords)
    decodedRecords = DecodedRecords(capacity: configuration.decodedRecords)
    contentDirectories = ContentDirectories(layout: layout)
    if try layout.prepare() {
      // A new cache holds nothing: its ledger starts at 0 (unless a publish already set it).
      try lock.withExclusiveLockedFile { fd throws(AttachmentError) in
        if CacheLedger.read(fd) == nil { CacheLedger.write(fd, 0) }
      }
    }
    records = try RecordStore.open(path: layout.records, lock: lock)
    do {
      recordKey = try CacheRecordKey.load(records, lock: lock, durable: configuration.durable)
    } catch {
      records.release()
      throw error
    }
    if !configuration.anonymousBodyFiles { removeAbandonedBodyFiles() }
  }

  deinit {
    records.release()
  }

  // MARK: - The public view of the layout

  /// The text of the record of `url` (`key value` lines), or `nil` when there is none or `url`
  /// is not an absolute http(s) URL. For tools and tests; the format is the cache's own.
  public func recordText(forURL url: String) -> String? {
    guard let key = URLKey(url), case .bytes(let bytes) = records.read(recordKey.name(for: key)) else {
      return nil
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Stores `text` as the record of `url` as it is, unchecked (`nil` removes the record), under
  /// the lock: for tests that damage or age a record.
  /// - Throws: `io_error` when the store cannot be written or `url` is not an http(s) URL.
  func replaceRecordText(_ text: String?, forURL url: String) throws(AttachmentError) {
    guard let key = URLKey(url) else { throw AttachmentError(.ioError, "Not a URL: \(url)") }
    let name = recordKey.name(for: key)
    try lock.withExclusiveLock { () throws(AttachmentError) in
      try records.write(sync: configuration.durable) { (writer) throws(AttachmentError) in
        if let text { try writer.put(name, Array(text.utf8)) } else { writer.remove(name) }
      }
    }
  }

  /// The content file of the entry of `url` when the cache holds a readable record whose
  /// content has the recorded size (fresh or stale; no policy is judged here), else `nil`.
  public func contentPath(forURL url: String) -> String? {
    URLKey(url).flatMap { entry(for: $0)?.path }
  }

  // MARK: - Reading (the hit path: no lock is waited for)

  /// The entry for a URL key if its record is readable and its content has the recorded
  /// size and seal. A damaged entry is a miss, never served: a record that does not parse or
  /// whose content is missing is dropped (when the lock is free); a symbolic link, FIFO or
  /// another user's file is ignored (`verify` removes it). Content whose inode or change time
  /// differs from the record's ``ContentSeal`` (written to since, or another file put there) is
  /// re-hashed first: served (and the record resealed) when it still has its SHA-256, removed
  /// with its record otherwise.
  func entry(for key: URLKey) -> CacheEntry? {
    let digest = recordKey.name(for: key)
    lookups.add(1, ordering: .relaxed)
    guard
      let (decoded, bytes) = records.withBytes(
        of: digest, { decodedRecords.record(named: digest, stored: $0) })
    else { return nil }
    guard let record = decoded, record.url == key.normalized else {
      dropRecord(digest: digest, ifStill: bytes)
      return nil
    }
    let validation = record.validation
    let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
    let (found, seal) = contentDirectories.find(path: path, sha256: validation.sha256)
    switch found {
    case .file(let size, _) where size == validation.bytes:
      let entry = CacheEntry(record: record, path: path, digest: digest)
      return seal == record.seal ? entry : resealed(entry, seal: seal, recordBytes: bytes)
    case .missing, .file:
      dropRecord(digest: digest, ifStill: bytes)
      return nil
    case .damaged:
      return nil
    }
  }

  /// An entry whose content's seal is not the record's: re-hashed (the only hit that loads
  /// libcrypto, once per change), then served with its record resealed (when the lock is free)
  /// if the bytes are still the recorded ones, else removed with its record and a miss.
  private func resealed(_ entry: CacheEntry, seal: ContentSeal?, recordBytes: [UInt8]) -> CacheEntry? {
    let sha256 = entry.record.validation.sha256
    let hashed = SHA256Hasher.hashFile(atPath: entry.path, extraFlags: O_NOFOLLOW | O_NONBLOCK)
    guard let hashed, hashed.digest == sha256, let seal, ContentSeal(path: entry.path) == seal else {
      // Damage is rare: this waits for the lock (a sweep holds it in short slices), so the next
      // publish of these bytes finds no damaged file of the right size to keep.
      try? lock.withExclusiveLockedFile { lockFile in
        // Only the file that was judged: a publish may have replaced it meanwhile.
        if let seal, ContentSeal(path: entry.path) == seal, unlink(entry.path) == 0 {
          _ = CacheLedger.add(lockFile, -entry.record.validation.bytes)
        }
        try? records.write(sync: configuration.durable) { writer in
          if writer.read(entry.digest) == .bytes(recordBytes) { writer.remove(entry.digest) }
        }
      }
      return nil
    }
    var record = entry.record
    record.seal = seal
    _ = lock.withExclusiveLockIfFree {
      guard currentRecord(digest: entry.digest) == entry.record else { return }
      try? writeRecord(record, digest: entry.digest)
    }
    return CacheEntry(record: record, path: entry.path, digest: entry.digest)
  }

  /// Records a use of an entry for LRU, at most once a minute per entry (a write per hit
  /// would cost more than the hit). Never waits: when another process holds the lock (a
  /// sweep), the update is skipped. Under the lock the record is re-read and written only if
  /// it is still the one the hit served, so a newer record is never overwritten.
  func touch(_ entry: CacheEntry, now: Double) {
    guard now - entry.record.lastAccess > 60 else { return }
    _ = lock.withExclusiveLockIfFree {
      guard currentRecord(digest: entry.digest) == entry.record else { return }
      var record = entry.record
      record.lastAccess = now
      try? writeRecord(record, digest: entry.digest)
    }
  }

  // MARK: - Under the lock

  /// The record now stored for a digest, parsed, or `nil`.
  func currentRecord(digest: String) -> CacheRecord? {
    guard case .bytes(let bytes) = records.read(digest) else { return nil }
    return decodedRecords.record(named: digest, bytes: bytes)
  }

  func healthyEntry(_ record: CacheRecord, digest: String) -> CacheEntry? {
    let path = layout.contentPath(
      sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
    guard case .file(let size, _) = CacheFiles.find(path: path), size == record.validation.bytes else {
      return nil
    }
    return CacheEntry(record: record, path: path, digest: digest)
  }

  /// Drops a record that failed its check, unless another writer replaced it meanwhile or
  /// the lock is busy (a hit never waits; `verify` removes it later).
  func dropRecord(digest: String, ifStill bytes: [UInt8]) {
    _ = lock.withExclusiveLockIfFree {
      try? records.write(sync: configuration.durable) { writer in
        if writer.read(digest) == .bytes(bytes) { writer.remove(digest) }
      }
    }
  }

  /// Removes named body files whose writer is gone (their lock can be taken). Needs no cache
  /// lock: a live writer holds its file's lock.
  func removeAbandonedBodyFiles() {
    let now = FileSystem.now()
    for name in CacheFiles.names(inDirectory: layout.temporary) where name.hasPrefix(CacheBodyFile.prefix) {
      if CacheBodyFile.isAbandoned(name: name, in: layout.temporary, now: now) {
        unlink("\(layout.temporary)/\(name)")
      }
    }
  }
}
