import Glibc

/// What a sweep reads before it decides: the record and content shards, without the lock.
extension AttachmentCache {
  // No lock: records are replaced by rename, content is immutable.

  /// Fan-out directories that are missing, not directories, or unsafe (another user's,
  /// writable by others).
  func unsafeShards() -> [String] {
    var bad: [String] = []
    for base in [layout.index, layout.content] {
      for shard in CacheLayout.shards {
        let directory = "\(base)/\(shard)"
        var info = stat()
        if lstat(directory, &info) != 0
          || CacheFiles.directoryProblem(info, groupWritableAllowed: false) != nil
        {
          bad.append(directory)
        }
      }
    }
    return bad
  }

  /// Every record file: the parsed ones (with their bytes) and those that are unreadable,
  /// unparsable or not regular files of this user. With `remembering` (garbage collection), a
  /// record file unchanged since the last remembering scan is not read again (see
  /// ``RecordScanMemory``), and this scan becomes the one remembered.
  func scanRecords(remembering: Bool = false) -> (
    records: [(String, [UInt8], CacheRecord)], unreadable: [(String, CacheFiles.RecordBytes)]
  ) {
    var records: [(String, [UInt8], CacheRecord)] = []
    var unreadable: [(String, CacheFiles.RecordBytes)] = []
    var remembered: [String: RecordScanMemory.Remembered] = [:]
    let identifying = remembering && !scanMemory.isOverflowed
    for shard in CacheLayout.shards {
      let directory = "\(layout.index)/\(shard)"
      _ = CacheFiles.withDirectory(directory) { fd -> Bool? in
        for name in CacheFiles.names(in: fd) {
          var identity: RecordScanMemory.Identity?
          if identifying, remembered.count <= scanMemory.capacity {
            var info = stat()
            if fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
              identity = RecordScanMemory.Identity(info)
            }
            if let identity, let known = scanMemory.recall(name, identity: identity) {
              records.append((name, known.bytes, known.record))
              remembered[name] = known
              continue
            }
          }
          let read = CacheFiles.readRecord(name, in: fd)
          switch read {
          case .missing: continue
          case .bytes(let bytes):
            if let record = CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...]),
              URLKey(record.url).map({ recordKey.name(for: $0) }) == name
            {
              records.append((name, bytes, record))
              if let identity {
                remembered[name] = RecordScanMemory.Remembered(
                  identity: identity, bytes: bytes, record: record)
              }
              continue
            }
            unreadable.append((name, read))
          case .damaged:
            unreadable.append((name, read))
          }
        }
        return nil
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
