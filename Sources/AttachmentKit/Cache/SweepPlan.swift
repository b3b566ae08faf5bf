/// What one sweep will remove, decided from what it read: a value computed without touching a
/// file, so every decision (what is damaged, what is evicted and in which order, which content
/// no record uses) is tested alone (`SweepPlanTests`). The sweep reads (``Scan``), plans, then
/// applies the steps under the lock in slices; each step re-checks what it removes.
struct SweepPlan: Equatable {
  /// What the sweep read before deciding (without the lock: records are read in one
  /// transaction, content is immutable).
  struct Scan {
    /// Roots of older cache formats that exist.
    var legacyRoots: [String] = []
    /// Fan-out directories that are unsafe, and whether each is simply missing.
    var unsafeShards: [(path: String, missing: Bool)] = []
    /// Readable records: the name (the URL key's digest), the bytes read, the record.
    var records: [(digest: String, bytes: [UInt8], record: CacheRecord)] = []
    /// Records that do not parse (or are not stored under their URL's name), with what was found.
    var unreadable: [(digest: String, found: RecordStore.Found)] = []
    /// Content files by path, with their sizes in bytes.
    var content: [String: Int64] = [:]
    /// Content paths that are not regular files of this user.
    var damagedContent: [String] = []
    /// Files in the content directories that are not named like content.
    var strayContent: [String] = []
    /// For a rehash: whether each content file's SHA-256 matched its name, by path.
    var hashMatches: [String: Bool] = [:]
  }

  /// One removal, re-checked when it runs.
  enum Step: Equatable {
    /// Remove a directory tree (an older format's root).
    case removeTree(String)
    /// Make an unsafe or missing fan-out directory anew.
    case repairShard(String)
    /// Remove a record if it still holds what was read.
    case removeRecord(digest: String, ifStill: RecordStore.Found)
    /// Remove a content file unless stamped since the sweep began or younger than `grace`
    /// seconds; with `sha256`, a stamped file is re-hashed first. `countedBytes` leave the
    /// size ledger when it goes.
    case removeContent(path: String, grace: Double?, sha256: String?, countedBytes: Int64)
    /// Remove a record if unchanged and then, when it was the content's last user, the content.
    case evict(digest: String, bytes: [UInt8], path: String, removingContent: Bool, countedBytes: Int64)
  }

  /// The removals, in the order they run.
  private(set) var steps: [Step] = []
  /// Damaged records and content found.
  private(set) var corrupt = 0
  /// Entries evicted to get under the limit.
  private(set) var evicted = 0
  /// Entries that remain.
  private(set) var entries = 0
  /// Distinct content files the remaining entries use.
  private(set) var contentFiles = 0
  /// Bytes of those content files.
  private(set) var bytes: Int64 = 0

  /// The plan for `scan`: damaged things removed, entries evicted least recently used first
  /// while the used content is over `limit` (down to `limit` × `lowWatermark`), and content no
  /// record uses removed after `gracePeriod` seconds.
  init(scan: Scan, layout: CacheLayout, limit: Int64?, lowWatermark: Double, gracePeriod: Double) {
    steps += scan.legacyRoots.map(Step.removeTree)
    for shard in scan.unsafeShards {
      if !shard.missing { corrupt += 1 }  // a missing one is only made; anything else is damage
      steps.append(.repairShard(shard.path))
    }
    for (digest, found) in scan.unreadable {
      corrupt += 1
      steps.append(.removeRecord(digest: digest, ifStill: found))
    }
    for path in scan.damagedContent {
      corrupt += 1
      steps.append(.removeContent(path: path, grace: nil, sha256: nil, countedBytes: 0))
    }
    steps += scan.strayContent.map { .removeContent(path: $0, grace: 3_600, sha256: nil, countedBytes: 0) }
    var live = liveEntries(scan, layout: layout)
    var used: [String: Int] = [:]
    for entry in live { used[entry.path, default: 0] += 1 }
    var evictedContent: Set<String> = []
    if let limit {
      live = evict(
        live, used: &used, evictedContent: &evictedContent, scan: scan, limit: limit,
        lowWatermark: lowWatermark)
    }
    // Content of an evicted entry goes with its record, or not at all: when the record changed
    // since the scan (a touch, a new publish), the eviction is refused and its content stays.
    // (In the content table's own order: sorting 100,000 paths would cost more than the scan.)
    for (path, size) in scan.content
    where used[path] == nil && scan.hashMatches[path] == nil && !evictedContent.contains(path) {
      steps.append(.removeContent(path: path, grace: gracePeriod, sha256: nil, countedBytes: size))
    }
    entries = live.count
    contentFiles = used.count
    bytes = used.keys.reduce(0) { $0 + (scan.content[$1] ?? 0) }
  }

  private struct LiveEntry {
    var digest: String
    var bytes: [UInt8]
    var record: CacheRecord
    var path: String
  }

  /// The records whose content is there with the recorded size (and hash, for a rehash); the
  /// others are planned for removal.
  private mutating func liveEntries(_ scan: Scan, layout: CacheLayout) -> [LiveEntry] {
    var live: [LiveEntry] = []
    for (digest, bytes, record) in scan.records {
      let validation = record.validation
      let path = layout.contentPath(sha256: validation.sha256, fileExtension: validation.fileExtension)
      let sized = scan.content[path] == validation.bytes
      let wrongHash = sized && scan.hashMatches[path] == false
      if sized && !wrongHash {
        live.append(LiveEntry(digest: digest, bytes: bytes, record: record, path: path))
        continue
      }
      corrupt += 1
      steps.append(.removeRecord(digest: digest, ifStill: .bytes(bytes)))
      if wrongHash {
        steps.append(
          .removeContent(
            path: path, grace: nil, sha256: validation.sha256, countedBytes: scan.content[path] ?? 0))
      }
    }
    return live
  }

  /// Evicts least recently used entries while the used content is over `limit`, down to the
  /// low watermark; answers the entries kept.
  private mutating func evict(
    _ live: [LiveEntry], used: inout [String: Int], evictedContent: inout Set<String>, scan: Scan,
    limit: Int64,
    lowWatermark: Double
  ) -> [LiveEntry] {
    var total = used.keys.reduce(Int64(0)) { $0 + (scan.content[$1] ?? 0) }
    guard total > limit else { return live }
    let target = Int64(Double(limit) * lowWatermark)
    var kept: [LiveEntry] = []
    for entry in live.sorted(by: { $0.record.lastAccess < $1.record.lastAccess }) {
      guard total > target else {
        kept.append(entry)
        continue
      }
      evicted += 1
      used[entry.path, default: 1] -= 1
      let lastUse = used[entry.path] == 0
      let size = scan.content[entry.path] ?? 0
      if lastUse {
        used[entry.path] = nil
        evictedContent.insert(entry.path)
        total -= size
      }
      steps.append(
        .evict(
          digest: entry.digest, bytes: entry.bytes, path: entry.path, removingContent: lastUse,
          countedBytes: size))
    }
    return kept
  }
}
