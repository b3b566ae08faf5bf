import Glibc
import PosixLock
import Synchronization

/// What the last garbage-collection scan of one cache object parsed from each record, so the
/// next scan parses only the records that changed since.
///
/// A record is remembered with its exact bytes: a record whose stored bytes are still those is
/// the record that was parsed, and its parse is reused (measured in the churn benchmark when
/// records were files: reading and parsing every record was 11 % of the run, ~50 µs a record;
/// the store's scan reads the bytes from a memory map, so the parse is what remains). Nothing
/// decided from it is trusted blindly: every removal re-reads the record under the lock and
/// compares its bytes, and `verify` parses every record afresh.
///
/// At most ``capacity`` records are remembered (a few hundred bytes each); a scan that finds
/// more remembers nothing, and the scan after it does not look here, until a scan finds few
/// enough again.
final class RecordScanMemory: Sendable {
  /// How many records are remembered at most (``CacheConfiguration`` sets it; 8,192 by
  /// default).
  let capacity: Int

  /// Makes an empty memory of at most `capacity` records.
  init(capacity: Int) {
    self.capacity = capacity
  }

  /// A record as a scan read it.
  struct Remembered: Sendable {
    /// Its bytes.
    var bytes: [UInt8]
    /// Its parse (which matched the record's name).
    var record: CacheRecord
  }

  private let remembered = Locked<[String: Remembered]>([:])
  private let overflowed = Atomic<Bool>(false)

  /// Whether the last scan found more than ``capacity`` records (the next one need not
  /// identify files it cannot remember).
  var isOverflowed: Bool { overflowed.load(ordering: .relaxed) }

  /// The remembered record named `name` (the URL key's digest) if `bytes` are still the ones
  /// it was parsed from, else `nil`.
  func recall(_ name: String, bytes: [UInt8]) -> Remembered? {
    remembered.withLock { memory in
      guard let found = memory[name], found.bytes == bytes else { return nil }
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
