import Glibc

/// Adopting an entry another tier holds (the object store's record and its verified content):
/// published as a download would be, content by hash and the record under the lock, keeping
/// the record's facts (validators, freshness, validation, rescue) as they were stored.
extension AttachmentCache {
  /// Publishes `content` (already verified against `record`'s SHA-256) as the entry of `key`
  /// with `record`'s facts; its access time is `now`.
  /// - Returns: the entry now in the cache.
  /// - Throws: `io_error` when the body cannot be written or published.
  func adopt(_ content: [UInt8], record: CacheRecord, key: URLKey, now: Double) throws(AttachmentError)
    -> CacheEntry
  {
    let body = try makeBodyFile()
    defer { body.discard() }
    var written = 0
    while written < content.count {
      let count = content.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return write(body.descriptor, base + written, raw.count - written)
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else {
        throw AttachmentError(.ioError, "Cannot write a body file: \(String(cString: strerror(errno))).")
      }
      written += count
    }
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
