import Glibc

/// The storage of answers, as the pipeline sees it: the one seam between the miss machine's
/// owner (``AttachmentPipeline``) and where files and their records live. The lookup and the
/// miss path call nothing else, so a second tier (a memory tier in front of the disk, a shared
/// store) is a conformer, with no change to the pipeline or the miss machine.
/// ``AttachmentCache`` (content-addressed files on disk) is the implementation.
///
/// Conformers are safe to call from any thread, and may block the calling one briefly (a lock
/// held in slices, a file read).
protocol CacheTier: Sendable {
  /// The entry stored for `key` whose content is intact, fresh or stale (no caller's policy is
  /// judged here), or `nil`: a miss.
  func entry(for key: URLKey) -> CacheEntry?

  /// Marks `entry` used at `now` (seconds since 1970) for the eviction order; may do nothing
  /// when it was marked lately or another writer holds the store.
  func touch(_ entry: CacheEntry, now: Double)

  /// A new file for a body in flight, which ``publish(body:validation:key:validators:peer:freshness:now:)``
  /// or ``stash(body:validation:)`` consumes, or the caller discards.
  /// - Throws: `io_error` when none can be made.
  func makeBodyFile() throws(AttachmentError) -> CacheBodyFile

  /// Stores a checked body as the entry of `key` and consumes it.
  /// - Returns: the entry now stored.
  /// - Throws: `io_error`; the store is then as it was.
  func publish(
    body: CacheBodyFile, validation: Validation, key: URLKey, validators: StoredValidators,
    peer: PeerAddressClass?, freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry

  /// Renews `entry` after a `304` with the response's validators and lifetime.
  /// - Returns: the entry as stored now, or `nil` when it was removed meanwhile (fetch again).
  /// - Throws: `io_error` when it cannot be written.
  func refresh(
    _ entry: CacheEntry, validators: StoredValidators, freshness: Freshness.Policy, now: Double
  ) throws(AttachmentError) -> CacheEntry?

  /// Keeps a checked body outside the index for this answer alone (`no-store`, or `private`
  /// in a shared store) and consumes it.
  /// - Returns: the file's path.
  /// - Throws: `io_error`.
  func stash(body: CacheBodyFile, validation: Validation) throws(AttachmentError) -> String

  /// Removes a stashed body its caller is done with (a path ``stash(body:validation:)``
  /// returned; any other path is left alone).
  /// - Returns: whether the file was removed by this call.
  @discardableResult
  func releaseUnindexed(_ path: String) -> Bool

  /// Removes the entry of `key`, if there is one (its content goes at the next sweep when no
  /// other entry uses it).
  /// - Returns: whether an entry was removed.
  /// - Throws: `io_error` when the store cannot be locked.
  func remove(key: URLKey) throws(AttachmentError) -> Bool

  /// Sweeps the store down to `maximumBytes` (its configured size when `nil`): damaged and
  /// unused files, then the least recently used entries.
  /// - Returns: what remains and what was removed.
  /// - Throws: `io_error` when the store cannot be locked.
  func collectGarbage(maximumBytes: Int64?) throws(AttachmentError) -> CacheReport
}

extension AttachmentCache: CacheTier {
  /// Removes the entry of `url` from the cache, if there is one (its content file goes at the
  /// next sweep when no other entry uses it).
  /// - Returns: whether an entry was removed; `false` also for a URL that is not an absolute
  ///   http(s) URL.
  /// - Throws: `io_error` when the cache's lock cannot be taken.
  public func remove(url: String) throws(AttachmentError) -> Bool {
    guard let key = URLKey(url) else { return false }
    return try remove(key: key)
  }

  /// Removes the record of `key` under the lock; its content file stays until a sweep finds
  /// no record using it.
  func remove(key: URLKey) throws(AttachmentError) -> Bool {
    let name = recordKey.name(for: key)
    return try lock.withExclusiveLock { () throws(AttachmentError) -> Bool in
      try records.write(sync: configuration.durable) { writer in writer.remove(name) }
    }
  }
}
