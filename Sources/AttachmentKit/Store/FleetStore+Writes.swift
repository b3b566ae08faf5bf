import Glibc

/// Writing a published entry to the store, in the background: its content object first
/// (written once: `If-None-Match: *`, a `412` means it is there), then its record, so that a
/// reader never finds a record without its bytes. Each part is tried
/// ``StoreConfiguration/writeAttempts`` times, then the write is dropped; both are counted and
/// logged, and no answer ever waits for them.
extension FleetStore {
  /// Queues the write of `entry` (a local entry's record, as tiers share it) with the content
  /// file at `path` (``SharedTier/write(_:of:contentPath:)``).
  func write(_ entry: TierEntry, of key: TierKey, contentPath path: String) {
    guard let recordName = Self.recordName(for: key.key) else { return }
    let shared = entry.record
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
    // Sent from the file as it is read (constant memory), after its hash is checked; a file
    // changed after the check is caught by every reader's own check.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard descriptor >= 0 else {
      log("the local content of \(recordName) is gone before its write")
      return false
    }
    defer { close(descriptor) }
    guard let hashed = SHA256Hasher.hashFile(atPath: "/proc/self/fd/\(descriptor)"),
      hashed.digest == validation.sha256, hashed.bytes == validation.bytes
    else {
      log("the local content of \(recordName) changed before its write")
      return false
    }
    let name = Self.contentName(sha256: validation.sha256, fileExtension: validation.fileExtension)
    let replacing = isCorrupt(name)
    let upload = StoreClient.Upload.file(descriptor: descriptor, length: validation.bytes)
    let contentWritten = attempt("content \(name)") {
      client.put(configuration.key(name), upload: upload, ifAbsent: !replacing, timeout: writeTimeout)
    }
    guard contentWritten else { return false }
    if replacing { replaced(name) }
    // A small entry's content goes inline too (FleetStore+RecordObject.swift), checked again.
    var inline = Self.inlineContent(descriptor, bytes: validation.bytes)
    if let content = inline, Self.sha256(content) != validation.sha256 { inline = nil }
    let object = Self.recordObject(Array(record.encoded().utf8), inline: inline)
    return attempt("record \(recordName)") {
      client.put(configuration.key(recordName), body: object, ifAbsent: false, timeout: writeTimeout)
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
}
