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
    let digest = recordKey.name(for: key)
    let validation = record.validation
    let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
    try ensureDirectory(layout.contentDirectory(sha256: validation.sha256))
    let ledger = try lock.withExclusiveLockedFile { (lockFile) throws(AttachmentError) -> Int64? in
      let added = try placeContent(body, at: path, bytes: validation.bytes)
      adopted.seal = ContentSeal(path: path)
      do throws(AttachmentError) {
        try writeRecord(adopted, digest: digest)
      } catch {
        _ = CacheLedger.add(lockFile, added)
        throw error
      }
      return CacheLedger.add(lockFile, added)
    }
    noteWritten(validation.bytes, ledger: ledger)
    return CacheEntry(record: adopted, path: path, digest: digest)
  }
}
