import CLMDB
import Glibc
import PosixLock
import Synchronization

/// The cache's per-URL records in one LMDB environment (`ROOT/v3/records`, its reader table in
/// `ROOT/v3/records-lock`), shared by every process that uses the cache directory. Content files
/// stay files; only the records live here, so a new entry costs one inode (its content).
///
/// Why LMDB (measured against SQLite in WAL mode, `scripts/bench-record-stores.sh`): a read is a
/// lookup in a memory map with no system call and no lock, where SQLite's costs a statement
/// step and its shared-memory locks; a process that opens the store for one hit pays a few
/// calls, not a schema read; and a writer killed at any moment leaves the last committed state
/// (copy-on-write pages, a robust writer mutex), with nothing to recover on the next open.
///
/// Reads take no lock. Writes are LMDB write transactions that the cache runs only under its
/// own lock (``FileLock``), so they never wait for another process's LMDB writer. Commits are not
/// synced (`MDB_NOSYNC`): a power loss may undo the last commits (their URLs become misses) but
/// never tears one; a durable cache (``CacheConfiguration/durable``) syncs after each commit.
///
/// LMDB forbids opening one environment twice in a process (closing the second would drop the
/// first one's POSIX locks), so ``open(path:lock:)`` shares one object per store file between
/// every cache object of the process, counted, whatever path names the file (a relative path,
/// a symbolic link: a path not seen before is compared by device and inode with the stores
/// already open). One no cache object uses any more stays open
/// (up to ``idleLimit`` of them, the oldest closed first): a process that opens the same cache
/// again pays no second open, and one about to exit (the command line) spends no calls
/// unmapping what the exit unmaps anyway.
final class RecordStore: @unchecked Sendable {
  /// What is stored under a name.
  enum Found: Equatable, Sendable {
    /// No record.
    case missing
    /// Something that cannot be a record (over 64 KiB).
    case damaged
    /// The record's bytes.
    case bytes([UInt8])
  }

  /// The store file's path.
  let path: String
  /// The environment (closed only when no cache object uses it and it is evicted from the idle
  /// ones).
  private let environment: OpaquePointer
  private let database: MDB_dbi
  /// Cache objects holding this store. Guarded by the registry's lock.
  private var users = 1
  /// When the last cache object released it (a count of releases), for closing the oldest
  /// idle store first. Guarded by the registry's lock.
  private var idleSince = 0
  /// The store file's device and inode, read from its descriptor the first time another path
  /// is opened in this process. Guarded by the registry's lock.
  private var identity: FileIdentity?
  /// Whether this process has cleared dead readers' slots (before its first write).
  private let readersChecked = Atomic<Bool>(false)

  /// The address space the store may map, in bytes: room for about two million records. A
  /// mapping, not memory: only the pages read are resident, and the file grows as it is written.
  static let mapSize = 4 << 30

  /// Read transactions open at once across every process on the cache (LMDB's default is 126; a
  /// slot costs 64 bytes of the readers' table). The first process to open a store sets it.
  static let maximumReaders: UInt32 = 1_024

  /// The largest record read back, in bytes (a record is under a kilobyte).
  static let largestRecord = 64 * 1024

  /// How many stores no cache object uses stay open (see the type's notes).
  static let idleLimit = 4

  /// A file's device and inode.
  private struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init(_ status: stat) {
      device = UInt64(status.st_dev)
      inode = UInt64(status.st_ino)
    }
  }

  /// The stores this process has open, by every path it opened them by, and a count of
  /// releases (the idle clock).
  private static let registry = Locked<(stores: [String: RecordStore], releases: Int)>(([:], 0))

  /// The store at `path`, opened (and created, 0600) on first use in this process, else the
  /// environment this process already has open on that file. A file that is not an LMDB store
  /// (damaged, truncated, foreign) is replaced by an empty store under `lock`: records are only
  /// an index, so its URLs become misses and the next sweep removes the content no record uses.
  /// - Throws: `io_error` when the store cannot be opened or created.
  static func open(path: String, lock: FileLock) throws(AttachmentError) -> RecordStore {
    var opened = shared(path)
    if case .failure(let status) = opened, status.isDamage {
      opened = try lock.withExclusiveLock { () -> Result<RecordStore, Status> in
        // Another process may have replaced it meanwhile: look again under the lock.
        var again = shared(path)
        if case .failure(let status) = again, status.isDamage {
          unlink(path)
          unlink(path + "-lock")
          again = shared(path)
        }
        return again
      }
    }
    switch opened {
    case .success(let store): return store
    case .failure(let status):
      throw AttachmentError(.ioError, "Cannot open the cache's record store \(path): \(status).")
    }
  }

  /// Why LMDB refused: its return code.
  struct Status: Error, CustomStringConvertible {
    let code: Int32
    /// Whether the file is not a store this library can read (so it may be replaced).
    var isDamage: Bool { [MDB_INVALID, MDB_VERSION_MISMATCH, MDB_CORRUPTED, MDB_PANIC].contains(code) }
    var description: String { RecordStore.describe(code) }
  }

  /// The process's environment on `path`, opened on first use.
  private static func shared(_ path: String) -> Result<RecordStore, Status> {
    registry.withLock { registry -> Result<RecordStore, Status> in
      if let store = registry.stores[path] {
        if store.isFile(at: path) {
          store.users += 1
          return .success(store)
        }
        // A file replaced at the path (a cache directory removed and made again) is another
        // store: the old one is forgotten here, and closed by its last user.
        registry.stores[path] = nil
        if store.users == 0, !registry.stores.values.contains(where: { $0 === store }) {
          mdb_env_close(store.environment)
        }
      }
      // Another name of a file already open: the same environment, never a second one. Only a
      // process with a store open pays the calls (a `stat`, and an `fstat` per store once).
      var named = stat()
      if !registry.stores.isEmpty, stat(path, &named) == 0 {
        let wanted = FileIdentity(named)
        if let store = registry.stores.values.first(where: { $0.fileIdentity() == wanted }) {
          store.users += 1
          registry.stores[path] = store
          return .success(store)
        }
      }
      do throws(Status) {
        let store = try RecordStore(path: path)
        registry.stores[path] = store
        return .success(store)
      } catch {
        return .failure(error)
      }
    }
  }

  /// Whether the file at `path` is the one this environment has open (same device and inode;
  /// an inode in use is never given to another file).
  private func isFile(at path: String) -> Bool {
    var descriptor: Int32 = -1
    var open = stat()
    var named = stat()
    return mdb_env_get_fd(environment, &descriptor) == 0 && fstat(descriptor, &open) == 0
      && stat(path, &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino
  }

  /// The device and inode of the file this environment has open (read once). The caller holds
  /// the registry's lock.
  private func fileIdentity() -> FileIdentity? {
    if let identity { return identity }
    var descriptor: Int32 = -1
    var open = stat()
    guard mdb_env_get_fd(environment, &descriptor) == 0, fstat(descriptor, &open) == 0 else { return nil }
    identity = FileIdentity(open)
    return identity
  }

  /// Gives up one cache object's use. A store no one uses stays open while it is among the
  /// ``idleLimit`` most recently released; older idle ones are closed.
  func release() {
    Self.registry.withLock { registry in
      users -= 1
      guard users == 0 else { return }
      registry.releases += 1
      idleSince = registry.releases
      guard registry.stores.values.contains(where: { $0 === self }) else {
        mdb_env_close(environment)  // replaced at its paths: nobody can reach it any more
        return
      }
      var idle: [RecordStore] = []
      for store in registry.stores.values where store.users == 0 && !idle.contains(where: { $0 === store }) {
        idle.append(store)
      }
      idle.sort { $0.idleSince < $1.idleSince }
      for store in idle.dropLast(Self.idleLimit) {
        registry.stores = registry.stores.filter { $0.value !== store }
        mdb_env_close(store.environment)
      }
    }
  }

  private init(path: String) throws(Status) {
    self.path = path
    var environment: OpaquePointer?
    let created = mdb_env_create(&environment)
    guard created == 0, let environment else { throw Status(code: created) }
    let flags = UInt32(MDB_NOSUBDIR | MDB_NOTLS | MDB_NOSYNC | MDB_NOMETASYNC)
    var status = mdb_env_set_mapsize(environment, Self.mapSize)
    if status == 0 { status = mdb_env_set_maxreaders(environment, Self.maximumReaders) }
    if status == 0 { status = mdb_env_open(environment, path, flags, 0o600) }
    var database = MDB_dbi(0)
    if status == 0 {
      var transaction: OpaquePointer?
      status = Self.begin(environment, flags: UInt32(MDB_RDONLY), &transaction)
      if status == 0, let transaction {
        status = mdb_dbi_open(transaction, nil, 0, &database)
        status = status == 0 ? mdb_txn_commit(transaction) : (mdb_txn_abort(transaction), status).1
      }
    }
    guard status == 0 else {
      mdb_env_close(environment)
      throw Status(code: status)
    }
    self.environment = environment
    self.database = database
  }

  // MARK: - Reading (no lock, no system call once open)

  /// The record stored under `name`.
  func read(_ name: String) -> Found {
    withReadTransaction { transaction in Self.get(transaction, database, name) } ?? .missing
  }

  /// Runs `body` on the bytes stored under `name` where they lie in the map (valid only during
  /// the call: copy what is kept), or returns `nil` when there is none or they are too big to
  /// be a record. The hit's read: nothing is copied when the bytes are those decoded last.
  func withBytes<T>(of name: String, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
    withReadTransaction { transaction -> T? in
      Self.withKey(name) { keyValue -> T? in
        var value = MDB_val()
        guard mdb_get(transaction, database, &keyValue, &value) == 0, value.mv_size <= Self.largestRecord
        else {
          return nil
        }
        return body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
      }
    } ?? nil
  }

  /// Every name and what it holds, read in one transaction (one consistent view), in key order.
  func all() -> [(name: String, found: Found)] {
    withReadTransaction { transaction -> [(name: String, found: Found)] in
      var cursor: OpaquePointer?
      guard mdb_cursor_open(transaction, database, &cursor) == 0, let cursor else { return [] }
      defer { mdb_cursor_close(cursor) }
      var found: [(name: String, found: Found)] = []
      var key = MDB_val()
      var value = MDB_val()
      var operation = MDB_FIRST
      while mdb_cursor_get(cursor, &key, &value, operation) == 0 {
        operation = MDB_NEXT
        found.append((Self.string(key), Self.found(value)))
      }
      return found
    } ?? []
  }

  /// How many names are stored (the records and the naming key).
  func count() -> Int {
    withReadTransaction { transaction -> Int in
      var statistics = MDB_stat()
      return mdb_stat(transaction, database, &statistics) == 0 ? Int(statistics.ms_entries) : 0
    } ?? 0
  }

  // MARK: - Writing (the cache's lock held)

  /// Runs `body` in one write transaction, committed when it returns normally and undone when
  /// it throws. `sync` flushes the commit to the disk before returning.
  /// - Throws: `io_error` when the store cannot be written (full, read-only, I/O), or what
  ///   `body` throws; nothing `body` did is then stored.
  func write<T>(sync: Bool, _ body: (Writer) throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    if !readersChecked.exchange(true, ordering: .relaxed) {
      // Slots of readers that were killed keep old pages from being reused; clear them once.
      var dead: Int32 = 0
      mdb_reader_check(environment, &dead)
    }
    var transaction: OpaquePointer?
    var status = Self.begin(environment, flags: 0, &transaction)
    guard status == 0, let transaction else { throw failure("begin a write to", status) }
    let result: T
    do {
      result = try body(Writer(transaction: transaction, database: database))
    } catch {
      mdb_txn_abort(transaction)
      throw error
    }
    status = mdb_txn_commit(transaction)
    if status == 0, sync { status = mdb_env_sync(environment, 1) }
    guard status == 0 else { throw failure("commit to", status) }
    return result
  }

  // MARK: - Transactions and values

  private func withReadTransaction<T>(_ body: (OpaquePointer) -> T) -> T? {
    var transaction: OpaquePointer?
    guard Self.begin(environment, flags: UInt32(MDB_RDONLY), &transaction) == 0, let transaction else {
      return nil
    }
    defer { mdb_txn_abort(transaction) }
    return body(transaction)
  }

  /// Begins a transaction; when another process grew the map, adopts its size and begins again.
  private static func begin(_ environment: OpaquePointer, flags: UInt32, _ transaction: inout OpaquePointer?)
    -> Int32
  {
    var status = mdb_txn_begin(environment, nil, flags, &transaction)
    if status == MDB_MAP_RESIZED, mdb_env_set_mapsize(environment, 0) == 0 {
      status = mdb_txn_begin(environment, nil, flags, &transaction)
    }
    return status
  }

  static func get(_ transaction: OpaquePointer, _ database: MDB_dbi, _ name: String) -> Found {
    withKey(name) { keyValue in
      var value = MDB_val()
      guard mdb_get(transaction, database, &keyValue, &value) == 0 else { return .missing }
      return found(value)
    }
  }

  /// Runs `body` with `name`'s UTF-8 bytes as an LMDB key, in place (valid only during the call;
  /// no copy for a native string: the hit's read makes none).
  static func withKey<T>(_ name: String, _ body: (inout MDB_val) -> T) -> T {
    var name = name
    return name.withUTF8 { bytes in
      var key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
      return body(&key)
    }
  }

  static func found(_ value: MDB_val) -> Found {
    guard value.mv_size <= largestRecord else { return .damaged }
    guard value.mv_size > 0, let data = value.mv_data else { return .bytes([]) }
    return .bytes(Array(UnsafeRawBufferPointer(start: data, count: value.mv_size)))
  }

  static func string(_ value: MDB_val) -> String {
    guard let data = value.mv_data else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: value.mv_size), as: UTF8.self)
  }

  private func failure(_ what: String, _ status: Int32) -> AttachmentError {
    AttachmentError(.ioError, "Cannot \(what) the cache's record store \(path): \(Self.describe(status)).")
  }

  static func describe(_ status: Int32) -> String {
    guard let text = mdb_strerror(status) else { return "error \(status)" }
    return String(cString: text)
  }
}
