import Glibc

/// The cache's size ledger: how many bytes of content the cache holds, kept in the first 16
/// bytes of its lock file and read and written only under that lock. Every publish that adds
/// a content file adds its size; every sweep sets it to what it left plus what was published
/// while it ran. A publish can then tell, without reading any record, whether the cache has
/// passed its limit, so a sweep runs exactly when one is needed and the cache ends a run at or
/// under its limit.
///
/// The ledger is advisory: `verify` and every sweep recompute it from the files. It is
/// "unknown" (`nil`) when the lock file is new, when the 16 bytes do not check (a torn write, a
/// cache written by an older version, which only locks the file), or after `clear`; callers
/// then fall back to sweeping after a fixed number of written bytes. Publishes of a version
/// without a ledger are not counted until the next sweep.
///
/// Format: the byte count as a little-endian `Int64`, then the same value XORed with
/// ``check``, so a torn or foreign file reads as unknown, never as a wrong size.
enum CacheLedger {
  /// What the second word is XORed with ("ledger01" in ASCII).
  static let check: UInt64 = 0x6C65_6467_6572_3031

  /// The bytes recorded in the open lock file `descriptor` (lock held), or `nil` when unknown.
  static func read(_ descriptor: Int32) -> Int64? {
    var words: (UInt64, UInt64) = (0, 0)
    let count = withUnsafeMutableBytes(of: &words) { pread(descriptor, $0.baseAddress, 16, 0) }
    guard count == 16 else { return nil }
    let value = UInt64(littleEndian: words.0)
    guard UInt64(littleEndian: words.1) == value ^ check, let bytes = Int64(exactly: value), bytes >= 0
    else { return nil }
    return bytes
  }

  /// Records `bytes` (clamped at 0) in the open lock file `descriptor` (lock held). A failed
  /// write leaves the ledger unknown or stale, which the next sweep corrects.
  static func write(_ descriptor: Int32, _ bytes: Int64) {
    let value = UInt64(max(0, bytes))
    var words = (value.littleEndian, (value ^ check).littleEndian)
    _ = withUnsafeBytes(of: &words) { pwrite(descriptor, $0.baseAddress, 16, 0) }
  }

  /// Adds `bytes` to a known ledger (lock held) and returns the new total; leaves an unknown
  /// ledger unknown and returns `nil`.
  static func add(_ descriptor: Int32, _ bytes: Int64) -> Int64? {
    guard let current = read(descriptor) else { return nil }
    guard bytes != 0 else { return current }
    let total = current + bytes
    write(descriptor, total)
    return total
  }

  /// Makes the ledger unknown (lock held), after `clear`: the next sweep counts again.
  static func forget(_ descriptor: Int32) {
    var zeros: (UInt64, UInt64) = (0, 0)
    _ = withUnsafeBytes(of: &zeros) { pwrite(descriptor, $0.baseAddress, 16, 0) }
  }
}
