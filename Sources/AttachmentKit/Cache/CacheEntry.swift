/// A usable cache entry: its record and the path of its verified-size content file.
struct CacheEntry: Sendable, Equatable {
  /// The index record.
  var record: CacheRecord
  /// The content file (canonical extension).
  var path: String
  /// The record's name in the store (the keyed digest of the URL key).
  var digest: String

  /// Whether the entry is fresh at `now` (seconds since 1970).
  func isFresh(at now: Double) -> Bool { now < record.freshUntil }
}

/// What maintenance found and did.
public struct CacheReport: Sendable, Equatable, Codable {
  /// Records that remain and point at content of the right size (and hash, for `verify`).
  public var entries = 0
  /// Bytes of distinct content that remain.
  public var bytes: Int64 = 0
  /// Distinct content files that remain.
  public var contentFiles = 0
  /// Records or content found damaged (size or hash mismatch, unreadable record).
  public var corrupt = 0
  /// Files removed: damaged ones, orphans, abandoned temporary files and evicted entries.
  public var removed = 0
  /// Entries evicted to get under the size limit (least recently used first).
  public var evicted = 0
  /// Temporary files present (in flight in a live process) after the run.
  public var temporaryFiles = 0

  /// Makes an empty report.
  public init() {}
}
