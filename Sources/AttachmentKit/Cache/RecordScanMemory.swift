import Glibc
import Synchronization

/// What the last garbage-collection scan of one cache object read from each record file, so
/// the next scan reads and parses only the records that changed since.
///
/// A record file is never written in place: every write makes a new file and renames it over
/// the name. A file whose inode number, size, modification and change times (nanoseconds) are
/// those remembered is therefore the file that was read, and its remembered bytes and parse
/// are reused after one `fstatat` instead of an open, a read and a parse (measured in the churn
/// benchmark: reading and parsing every record was 11 % of the run, ~50 µs a record). Nothing
/// decided from it is trusted blindly: every removal re-reads the record under the lock and
/// compares its bytes, and `verify` reads every record afresh.
///
/// At most ``capacity`` records are remembered (a few hundred bytes each); a scan that finds
/// more remembers nothing, and the scan after it does not even `fstat` (a 100,000-entry cache
/// is read as before, without 100,000 extra calls), until a scan finds few enough again.
final class RecordScanMemory: Sendable {
  /// How many records are remembered at most (``CacheConfiguration`` sets it; 8,192 by
  /// default).
  let capacity: Int

  /// Makes an empty memory of at most `capacity` records.
  init(capacity: Int) {
    self.capacity = capacity
  }

  /// The identity of a record file: what changes whenever it is replaced or touched.
  struct Identity: Equatable, Sendable {
    /// Inode number.
    var inode: UInt64
    /// Size in bytes.
    var size: Int64
    /// Modification time: seconds, then nanoseconds.
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int
    /// Status change time: seconds, then nanoseconds.
    var changedSeconds: Int
    var changedNanoseconds: Int

    /// The identity of a `stat` result.
    init(_ info: stat) {
      inode = UInt64(info.st_ino)
      size = Int64(info.st_size)
      modifiedSeconds = info.st_mtim.tv_sec
      modifiedNanoseconds = info.st_mtim.tv_nsec
      changedSeconds = info.st_ctim.tv_sec
      changedNanoseconds = info.st_ctim.tv_nsec
    }
  }

  /// A record as a scan read it.
  struct Remembered: Sendable {
    /// The file it was read from.
    var identity: Identity
    /// Its bytes.
    var bytes: [UInt8]
    /// Its parse (which matched the file's name).
    var record: CacheRecord
  }

  private let remembered = Mutex<[String: Remembered]>([:])
  private let overflowed = Atomic<Bool>(false)

  /// Whether the last scan found more than ``capacity`` records (the next one need not
  /// identify files it cannot remember).
  var isOverflowed: Bool { overflowed.load(ordering: .relaxed) }

  /// The remembered record at `name` (a record file name: the URL key's digest) if `identity`
  /// is still the file's, else `nil`.
  func recall(_ name: String, identity: Identity) -> Remembered? {
    remembered.withLock { memory in
      guard let found = memory[name], found.identity == identity else { return nil }
      return found
    }
  }

  /// How many records are remembered now.
  var count: Int { remembered.withLock { $0.count } }

  /// Replaces what is remembered by what a whole scan read, given the number of records it
  /// found (nothing is kept when that is more than ``capacity``).
  func replace(with scan: [String: Remembered], found: Int) {
    let fits = found <= capacity
    overflowed.store(!fits, ordering: .relaxed)
    remembered.withLock { $0 = fits ? scan : [:] }
  }
}
