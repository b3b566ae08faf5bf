import Glibc

/// The local cache as a shared tier (``SharedTier``): a cache directory standing behind another
/// (a bigger or longer-lived disk, a directory several processes of one machine share). A read
/// copies an entry's content into the caller's file, hashing it on the way; a write copies the
/// given file into a body file of this cache, checks it against the entry's SHA-256 and size,
/// and adopts it with the entry's facts, before it returns.
extension AttachmentCache: SharedTier {
  /// The entry of `key` with its content copied into `destination` and checked; `missing` when
  /// this cache has none (or its content is gone, or is larger than `maximumBytes`), `failed`
  /// when the copy failed, ran out of `budget` or did not match the record.
  public func read(_ key: TierKey, into destination: Int32, maximumBytes: Int64, budget: Duration) -> TierRead
  {
    let deadline = ContinuousClock.now + budget
    guard let entry = entry(for: key.key), entry.record.validation.bytes <= maximumBytes else {
      return .missing
    }
    let source = open(entry.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard source >= 0 else { return .missing }
    defer { close(source) }
    let validation = entry.record.validation
    guard
      let copied = SHA256Hasher.copy(
        source, to: destination, maximumBytes: validation.bytes, deadline: deadline),
      copied.bytes == validation.bytes, copied.digest == validation.sha256
    else { return .failed }
    return .found(TierEntry(entry.record))
  }

  /// Copies the file at `contentPath` into this cache and adopts it as the entry of `key`, when
  /// it matches `entry`'s SHA-256 and size; a file that does not, or a cache that cannot take it
  /// (a full disk), is dropped.
  public func write(_ entry: TierEntry, of key: TierKey, contentPath: String) {
    let source = open(contentPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard source >= 0 else { return }
    defer { close(source) }
    guard let body = try? makeBodyFile() else { return }
    guard
      let copied = SHA256Hasher.copy(source, to: body.descriptor, maximumBytes: entry.bytes),
      copied.bytes == entry.bytes, copied.digest == entry.sha256
    else {
      body.discard()
      return
    }
    _ = try? adopt(body, record: entry.record, key: key.key, now: FileSystem.now())
  }
}
