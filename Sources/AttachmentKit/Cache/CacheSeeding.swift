/// Benchmark and test seeding: many records for one stored content, without knowing the
/// record format. Package access: not part of the library's public API.
extension AttachmentCache {
  /// Stores the entry of `url` again under each of `urls` (same content, same facts), with
  /// `lastAccess` as their LRU time when given. For tools that seed a cache (the benchmarks'
  /// 100,000-entry index) without knowing its format. Takes the lock in short slices, like a
  /// sweep, so hits and publishes of other callers go on meanwhile.
  /// - Returns: how many records were written.
  /// - Throws: `io_error` when `url` has no entry or a record cannot be written.
  package func storeCopies(of url: String, as urls: [String], lastAccess: Double? = nil)
    throws(AttachmentError) -> Int
  {
    guard let key = URLKey(url), let source = entry(for: key) else {
      throw AttachmentError(.ioError, "The cache holds no entry for the URL to copy.")
    }
    var written = 0
    let slice = max(1, configuration.sweepSliceOperations)
    var next = 0
    while next < urls.count {
      let end = min(urls.count, next + slice)
      written += try lock.withExclusiveLock { () throws(AttachmentError) -> Int in
        // One transaction per slice: a commit per record would cost more than the records.
        try records.write(sync: configuration.durable) { (writer) throws(AttachmentError) -> Int in
          var count = 0
          for other in urls[next..<end] {
            guard let otherKey = URLKey(other) else { continue }
            var record = source.record
            record.url = otherKey.normalized
            if let lastAccess { record.lastAccess = lastAccess }
            try writer.put(recordKey.name(for: otherKey), Array(record.encoded().utf8))
            count += 1
          }
          return count
        }
      }
      next = end
    }
    return written
  }
}
