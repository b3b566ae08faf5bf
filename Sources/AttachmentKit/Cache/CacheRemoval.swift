import Glibc

/// What ``AttachmentCache/removeEntries(for:force:)`` did for each URL.
public struct CacheRemoval: Sendable, Equatable {
  /// The outcome of one URL.
  public enum Outcome: String, Sendable, Equatable {
    /// Its entry was removed (and its content, unless another entry uses it).
    case removed
    /// The cache held no entry for it.
    case notCached = "not_cached"
    /// Its entry was fetched (or last confirmed) with another URL, in query parameters the key
    /// leaves out (``CacheKeyRules``): kept, unless the removal is forced. A forged presigned
    /// URL must not purge what another caller's URL fetched.
    case unconfirmed
  }

  /// Each URL's outcome, in the order given.
  public var outcomes: [(url: AttachmentURL, outcome: Outcome)]
  /// Content files removed because no entry uses them any more.
  public var contentFilesRemoved: Int
  /// The bytes those files held.
  public var bytesRemoved: Int64

  /// Two removals are equal when their URLs, outcomes and counts are.
  public static func == (lhs: CacheRemoval, rhs: CacheRemoval) -> Bool {
    lhs.outcomes.map(\.url) == rhs.outcomes.map(\.url)
      && lhs.outcomes.map(\.outcome) == rhs.outcomes.map(\.outcome)
      && lhs.contentFilesRemoved == rhs.contentFilesRemoved && lhs.bytesRemoved == rhs.bytesRemoved
  }
}

extension AttachmentCache {
  /// Removes the entries of `urls` (purge: an asset replaced at its URL is fetched again by
  /// the next request), each keyed by this cache's ``CacheConfiguration/keyRules`` as a
  /// pipeline on it keys them, with every standard profile's derivative of it (`android`,
  /// `ios-compact`: ``AttachmentProfile/standard``). A content file goes with its last entry; content another entry
  /// uses stays. Safe while other processes use the cache: the records and files change under
  /// the cache's lock, as publishes do; a reader that looked up a removed entry a moment before
  /// either reads the file it opened or finds it gone (a miss, fetched again).
  ///
  /// An entry that another URL fetched, in query parameters the key leaves out (a presigned
  /// URL's signature), is kept (``CacheRemoval/Outcome/unconfirmed``) unless `force`: the URL
  /// given may be a forged one.
  /// - Returns: each URL's outcome, and the content removed.
  /// - Throws: `io_error` when the cache's lock cannot be taken or the store not written.
  public func removeEntries(for urls: [AttachmentURL], force: Bool = false) throws(AttachmentError)
    -> CacheRemoval
  {
    let keyed = urls.map { $0.keyed(by: configuration.keyRules) }
    return try lock.withExclusiveLockedFile { (lockFile) throws(AttachmentError) -> CacheRemoval in
      var removal = CacheRemoval(outcomes: [], contentFilesRemoved: 0, bytesRemoved: 0)
      var candidates: [String: Int64] = [:]  // content path → its bytes
      try records.write(sync: configuration.durable) { writer in
        for url in keyed {
          // The URL's own entry and every standard profile's derivative of it.
          var removed = false
          var kept = false
          for key in Self.keys(of: url, rules: configuration.keyRules) {
            let name = recordKey.name(for: key)
            guard case .bytes(let bytes) = writer.read(name) else { continue }
            let record = CacheRecord(decoding: String(decoding: bytes, as: UTF8.self)[...])
            let caller = key.droppedParameters ? url.text : nil
            let rules = configuration.keyRules
            if !force, !rules.patterns.isEmpty, rules.confirmsHits, let record, record.source != caller {
              kept = true
              continue
            }
            guard writer.remove(name) else { continue }
            removed = true
            if let record {
              let path = layout.contentPath(
                sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
              candidates[path] = record.validation.bytes
            }
          }
          removal.outcomes.append((url, removed ? .removed : kept ? .unconfirmed : .notCached))
        }
      }
      guard !candidates.isEmpty else { return removal }
      // Content another entry still uses stays (publishes take this lock: none is under way).
      for (_, _, record) in scanRecords().records {
        let path = layout.contentPath(
          sha256: record.validation.sha256, fileExtension: record.validation.fileExtension)
        candidates[path] = nil
      }
      for (path, bytes) in candidates.sorted(by: { $0.key < $1.key }) where unlink(path) == 0 {
        removal.contentFilesRemoved += 1
        removal.bytesRemoved += bytes
      }
      if removal.bytesRemoved > 0 { _ = CacheLedger.add(lockFile, -removal.bytesRemoved) }
      return removal
    }
  }

  /// The keys `url` may be filed under: its own, then each standard profile's
  /// (``AttachmentProfile/standard``, ``CacheKeyRules/variant``).
  static func keys(of url: AttachmentURL, rules: CacheKeyRules) -> [URLKey] {
    let variants = AttachmentProfile.standard.values.filter { !$0.isIdentity }.map(\.name).sorted()
    return [url.key] + variants.map { url.keyed(by: rules.inVariant($0)).key }
  }
}
