import Glibc

/// Writing a published entry to the store, in the background: its content object first
/// (written once: `If-None-Match: *`, a `412` means it is there), then its record, so that a
/// reader never finds a record without its bytes. Each part is tried
/// ``StoreConfiguration/writeAttempts`` times, then the write is dropped; both are counted and
/// logged, and no answer ever waits for them.
extension FleetStore {
  /// Queues the write of `record` (a local entry's) with the content file at `path`.
  func write(_ record: CacheRecord, contentPath path: String, key: URLKey) {
    guard let recordName = Self.recordName(for: key) else { return }
    var shared = record
    shared.seal = nil
    shared.lastAccess = record.fetchedAt
    enqueue(recordName) { [self, shared] in
      if writeNow(shared, contentPath: path, recordName: recordName) {
        count { $0.writes += 1 }
      } else {
        count { $0.writesDropped += 1 }
        log("dropped the write of \(recordName) after \(configuration.writeAttempts) attempts")
      }
    }
  }

  /// Writes the content, then the record; whether both reached the store.
  private func writeNow(_ record: CacheRecord, contentPath path: String, recordName: String) -> Bool {
    let validation = record.validation
    guard let bytes = Self.readFile(path, bytes: validation.bytes), Self.sha256(bytes) == validation.sha256
    else {
      log("the local content of \(recordName) changed or is gone before its write")
      return false
    }
    let name = Self.contentName(sha256: validation.sha256, fileExtension: validation.fileExtension)
    let replacing = isCorrupt(name)
    let contentWritten = attempt("content \(name)") {
      client.put(configuration.key(name), body: bytes, ifAbsent: !replacing, timeout: writeTimeout)
    }
    guard contentWritten else { return false }
    if replacing { replaced(name) }
    let text = Array(record.encoded().utf8)
    return attempt("record \(recordName)") {
      client.put(configuration.key(recordName), body: text, ifAbsent: false, timeout: writeTimeout)
    }
  }

  /// Runs `put` until it succeeds (`200`, or `412`: the object is there already) or the
  /// attempts are spent, waiting 0.2 s, 0.4 s, … between them (on the write queue's thread).
  private func attempt(_ what: String, _ put: () -> StoreResponse) -> Bool {
    for attempt in 0..<max(1, configuration.writeAttempts) {
      if attempt > 0 { usleep(UInt32(min(200_000 << (attempt - 1), 5_000_000))) }
      let response = put()
      if response.failure == nil, response.status == 200 || response.status == 412 { return true }
      count { $0.writeFailures += 1 }
      let why = response.failure ?? "status \(response.status) \(response.errorCode ?? "")"
      log("writing \(what) failed (attempt \(attempt + 1)): \(why)")
    }
    return false
  }

  /// The bytes of the file at `path` when it holds exactly `bytes`, else `nil`.
  static func readFile(_ path: String, bytes: Int64) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0, bytes >= 0, bytes <= Int64(Int.max) else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: Int(bytes) + 1)
    var filled = 0
    while filled < buffer.count {
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        return Glibc.read(fd, base + filled, raw.count - filled)
      }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { break }
      filled += count
    }
    guard filled == Int(bytes) else { return nil }
    buffer.removeLast()
    return buffer
  }
}
