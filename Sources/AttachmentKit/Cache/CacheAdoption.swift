import Glibc

/// Adopting an entry another tier holds (the object store's record and its verified content):
/// published as a download would be, content by hash and the record under the lock, keeping
/// the record's facts (validators, freshness, validation, rescue) as they were stored.
extension AttachmentCache {
  /// Publishes `body` (a body file of this cache holding content already verified against
  /// `record`'s SHA-256) as the entry of `key` with `record`'s facts, and consumes it; its
  /// access time is `now`.
  /// - Returns: the entry now in the cache.
  /// - Throws: `io_error` when the body cannot be written or published.
  func adopt(_ body: CacheBodyFile, record: CacheRecord, key: URLKey, now: Double) throws(AttachmentError)
    -> CacheEntry
  {
    defer { body.discard() }
    if configuration.durable { fsync(body.descriptor) }
    var adopted = record
    adopted.lastAccess = now
    adopted.seal = nil
    return try commit(body, record: adopted, key: key)
  }
}
