import Glibc

/// The secret that names a cache's records: 16 random bytes stored in the record store under
/// the name ``storedName`` (never a record's: those are 32 hex digits), made by the first process
/// that opens the cache and read by every later one.
///
/// A record's name is the keyed SipHash-2-4-128 of its normalized URL (``SipHash128``), so no one
/// without the key can build two URLs whose records share a name and evict or overwrite each
/// other (with the unkeyed FNV-1a of earlier versions anyone could). The record still holds its
/// URL, which every read checks. Records named by another key (a key that was replaced) are
/// misses, and the next sweep removes them: their names are not their URLs' names.
struct CacheRecordKey: Sendable {
  private let hash: SipHash128

  /// The name the key is stored under.
  static let storedName = "key"

  /// The record name of a URL key: 32 lower-case hex digits.
  func name(for key: URLKey) -> String { name(forKey: key.normalized) }

  /// The name of the record of the key whose normalized text is `normalized` (a record's
  /// `url` line, as it was published: a profile's key keeps its `#profile`, which parsing it
  /// as a URL again would drop).
  func name(forKey normalized: String) -> String { hash.hex(normalized.utf8) }

  /// Reads the cache's key, making it when there is none (under the cache's lock, so two
  /// processes opening a new cache at once agree on one) or when the stored one is damaged
  /// (not 16 bytes).
  /// - Throws: `io_error` when the key cannot be written.
  static func load(_ store: RecordStore, lock: FileLock, durable: Bool) throws(AttachmentError)
    -> CacheRecordKey
  {
    if let key = key(in: store.read(storedName)) { return key }
    return try lock.withExclusiveLock { () throws(AttachmentError) -> CacheRecordKey in
      try store.write(sync: durable) { (writer) throws(AttachmentError) -> CacheRecordKey in
        if let key = key(in: writer.read(storedName)) { return key }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try writer.put(storedName, bytes)
        guard let key = key(in: .bytes(bytes)) else {
          throw AttachmentError(.ioError, "Cannot make the cache's record key.")
        }
        return key
      }
    }
  }

  /// The key stored, or `nil` when there is none or it is not 16 bytes.
  private static func key(in found: RecordStore.Found) -> CacheRecordKey? {
    guard case .bytes(let bytes) = found, bytes.count == 16, let hash = SipHash128(key: bytes) else {
      return nil
    }
    return CacheRecordKey(hash: hash)
  }
}
