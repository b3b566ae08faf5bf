import Glibc

/// What a sweep reads before it decides: the records and the content shards, without the lock.
extension AttachmentCache {
  // No lock: records are read in one read transaction, content is immutable.

  /// Content fan-out directories that are missing, not directories, or unsafe (another user's,
  /// writable by others).
  func unsafeShards() -> [String] {
    var bad: [String] = []
    for shard in CacheLayout.shards {
      let directory = "\(layout.content)/\(shard)"
      var info = stat()
      if lstat(directory, &info) != 0 || CacheFiles.directoryProblem(info, groupWritableAllowed: false) != nil
      {
        bad.append(directory)
      }
    }
    return bad
  }

  /// Every record: the parsed ones (with their bytes) and those that are too big, do not parse
  /// or are not stored under their URL's name. With `remembering` (garbage collection), a record
  /// whose bytes are those the last remembering scan parsed is not parsed again (see
  /// ``RecordScanMemory``), and this scan becomes the one remembered.
  func scanRecords(remembering: Bool = false) -> (
    records: [(String, [UInt8], CacheRecord)], unreadable: [(String, RecordStore.Found)]
  ) {
    var records: [(String, [UInt8], CacheRecord)] = []
    var unreadable: [(String, RecordStore.Found)] = []
    var remembered: [String: RecordScanMemory.Remembered] = [:]
    let recalling = remembering && !scanMemory.isOverflowed
    for (name, found) in self.records.all() where name != CacheRecordKey.storedName {
      guard case .bytes(let bytes) = found else {
        unreadable.append((name, found))
        continue
      }
      if recalling, let known = scanMemory.recall(name, bytes: bytes) {
        records.append((name, bytes, known.record))
        if remembered.count < scanMemory.capacity { remembered[name] = known }
        continue
      }
      // (named by its key as published, not by the key parsed again from it: a profile's key
      // ends in `#profile`, a fragment a URL's key drops)
      guard let record = CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...]),
        recordKey.name(forKey: record.url) == name
      else {
        unreadable.append((name, found))
        continue
      }
      records.append((name, bytes, record))
      if remembering, remembered.count < scanMemory.capacity {
        remembered[name] = RecordScanMemory.Remembered(bytes: bytes, record: record)
      }
    }
    if remembering { scanMemory.replace(with: remembered, found: records.count) }
    return (records, unreadable)
  }

  /// Every content file with its size and modification time; the paths of damaged ones
  /// (links, FIFOs, other users' files); and strays (names that are not content, such as an
  /// interrupted replacement).
  func scanContent() -> (
    files: [String: (size: Int64, modified: Double)], damaged: [String], strays: [String]
  ) {
    var files: [String: (size: Int64, modified: Double)] = [:]
    var damaged: [String] = []
    var strays: [String] = []
    for shard in CacheLayout.shards {
      let directory = "\(layout.content)/\(shard)"
      _ = CacheFiles.withDirectory(directory) { fd -> Bool? in
        for name in CacheFiles.names(in: fd) {
          let path = "\(directory)/\(name)"
          switch CacheFiles.find(name, in: fd) {
          case .missing: continue
          case .damaged: damaged.append(path)
          case .file(let size, let modified):
            let hash = name.prefix { $0 != "." }
            if name.hasPrefix(shard), CacheRecord.isSHA256(hash) {
              files[path] = (size, modified)
            } else {
              strays.append(path)
            }
          }
        }
        return nil
      }
    }
    return (files, damaged, strays)
  }
}
