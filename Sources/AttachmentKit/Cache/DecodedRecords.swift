import Glibc
import PosixLock

/// The records this cache object decoded lately, each kept with the exact bytes it came from, so
/// a hit whose record still holds those bytes in the store reuses the decoding instead of parsing
/// the text again (parsing was most of an in-process hit's own work).
///
/// Only equal bytes reuse a decoding: a record another process (or a publish, a refresh, a
/// touch) rewrote is decoded anew, so nothing is served from here that the store does not say
/// now. At most ``capacity`` records are kept (a record is under a kilobyte); when full, every
/// decoding is forgotten and the next hits decode again.
final class DecodedRecords: Sendable {
  private struct Decoded: Sendable {
    let bytes: [UInt8]
    let record: CacheRecord
  }

  /// How many records are kept at most (``CacheConfiguration`` sets it; 1,024 by default).
  let capacity: Int
  private let decoded = Locked<[String: Decoded]>([:])

  /// Makes an empty memory of at most `capacity` records (0 keeps none).
  init(capacity: Int) {
    self.capacity = capacity
  }

  /// The record stored under `name`, its bytes `stored` where they lie (``RecordStore/withBytes(of:_:)``):
  /// the kept decoding and its bytes when they are the same bytes (nothing copied), else a new
  /// decoding (kept in turn) and a copy of the bytes; the record is `nil` when the bytes are no
  /// record.
  func record(named name: String, stored: UnsafeRawBufferPointer) -> (record: CacheRecord?, bytes: [UInt8]) {
    if let kept = decoded.withLock({ $0[name] }), kept.bytes.count == stored.count,
      kept.bytes.withUnsafeBytes({ kept in
        guard let left = kept.baseAddress, let right = stored.baseAddress else { return stored.isEmpty }
        return memcmp(left, right, stored.count) == 0
      })
    {
      return (kept.record, kept.bytes)
    }
    let bytes = Array(stored)
    return (record(named: name, bytes: bytes), bytes)
  }

  /// The record stored under `name`, its `bytes` just read: the kept decoding when the
  /// bytes are the ones it came from, else a new one (kept in turn); `nil` when the bytes are
  /// no record.
  func record(named name: String, bytes: [UInt8]) -> CacheRecord? {
    if let kept = decoded.withLock({ $0[name] }), kept.bytes == bytes { return kept.record }
    guard let record = CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...]) else { return nil }
    guard capacity > 0 else { return record }
    decoded.withLock { decoded in
      if decoded.count >= capacity, decoded[name] == nil { decoded.removeAll(keepingCapacity: true) }
      decoded[name] = Decoded(bytes: bytes, record: record)
    }
    return record
  }
}
