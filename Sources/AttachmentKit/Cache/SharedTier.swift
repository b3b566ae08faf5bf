/// A tier of the attachment cache that can stand behind another: where a local miss looks
/// before the origin, and where what a miss published is kept for the other instances of a
/// fleet.
///
/// ``AttachmentPipeline`` composes two tiers: its local ``AttachmentCache`` first, then the
/// shared tier (``PipelineConfiguration/store``, an S3-compatible object store, or
/// ``PipelineConfiguration/sharedTier``, any conformer), then the origin. An entry the shared
/// tier finds is read into a new file of the local cache, adopted there (its record's facts kept:
/// validators, freshness, validation, rescue) and answered from the local copy, under the same
/// policy as any local hit; what the origin gave (fetched, checked, rescued) is handed to
/// ``write(_:of:contentPath:)`` after it is published locally.
///
/// ``AttachmentCache`` is a conformer (a second cache directory as the tier behind the first),
/// and so is the object store. A conformer is safe to call from any thread; ``read(_:into:maximumBytes:budget:)``
/// blocks the calling one (the pipeline calls it on a thread of its own, never on Swift's
/// cooperative pool).
public protocol SharedTier: Sendable {
  /// Reads the entry of `key`: its content is written to `destination` (an open, empty file the
  /// caller owns) and checked against the entry's size and SHA-256 before the entry is returned.
  /// - Parameters:
  ///   - key: the entry's cache key.
  ///   - destination: an open, empty file the caller owns, for the content.
  ///   - maximumBytes: the largest content the caller accepts; a larger entry is not read.
  ///   - budget: the most time the read may take.
  /// - Returns: ``TierRead/found(_:)`` once all of the content is in `destination` and matches;
  ///   ``TierRead/missing`` when the tier holds no entry for `key` (or none with its content);
  ///   ``TierRead/failed`` when the tier failed, ran out of `budget`, or held a copy that does
  ///   not match (never to be delivered). After anything but `found`, `destination`'s bytes are
  ///   the caller's to discard.
  func read(_ key: TierKey, into destination: Int32, maximumBytes: Int64, budget: Duration) -> TierRead

  /// Keeps `entry` as the entry of `key`; its content is the file at `contentPath`, which the
  /// caller checked and does not change. May return before the write is done (a background
  /// write) and may drop it (a tier is a cache), but never keeps a record without its content.
  func write(_ entry: TierEntry, of key: TierKey, contentPath: String)

  /// Writes accepted and not done yet (``AttachmentPipeline/finishStoreWrites(timeout:)`` waits
  /// for none); 0 for a tier whose writes are done when ``write(_:of:contentPath:)`` returns.
  var pendingWrites: Int { get }
}

extension SharedTier {
  /// None: the writes are done when ``write(_:of:contentPath:)`` returns.
  public var pendingWrites: Int { 0 }
}

/// What ``SharedTier/read(_:into:maximumBytes:budget:)`` found.
public enum TierRead: Sendable {
  /// The entry; its verified content is in the caller's file.
  case found(TierEntry)
  /// No entry for the key (or none with its content).
  case missing
  /// The tier failed, ran out of time, or held a copy that does not match.
  case failed
}

/// The key of an entry as every tier names it: the cache key, the same on every machine.
public struct TierKey: Sendable, Hashable {
  let key: URLKey

  init(_ key: URLKey) { self.key = key }

  /// The cache key's text: the URL, normalized, less the query parameters the cache-key rules
  /// drop (``CacheKeyRules``).
  public var normalized: String { key.normalized }

  /// The SHA-256 of ``normalized`` in hex: a name for the key that fits anywhere (an object
  /// name, a file name); `nil` only when libcrypto fails.
  public var digest: String? {
    let hasher = SHA256Hasher()
    Array(key.normalized.utf8).withUnsafeBytes { hasher.update($0) }
    return hasher.finalize()
  }
}

/// An entry as a tier keeps it: the record of a checked (perhaps rescued) answer, whose content
/// is named by its SHA-256.
public struct TierEntry: Sendable {
  /// The record as the tiers share it: no seal (a local cache seals its own), and its last
  /// access is when it was fetched.
  let record: CacheRecord

  /// `record` as tiers share it.
  init(_ record: CacheRecord) {
    var shared = record
    shared.seal = nil
    shared.lastAccess = record.fetchedAt
    self.record = shared
  }

  /// The content's SHA-256 in hex: its address.
  public var sha256: String { record.validation.sha256 }

  /// The content's length in bytes.
  public var bytes: Int64 { record.validation.bytes }

  /// The content's canonical file extension (`jpg`, `mp4`, …).
  public var fileExtension: String { record.validation.fileExtension }

  /// The record as text, for a tier that keeps it as bytes; ``init(serialized:key:)`` reads it
  /// back.
  public var serialized: [UInt8] { Array(record.encoded().utf8) }

  /// Reads an entry back from ``serialized``; `nil` when the bytes do not parse as a record,
  /// answer another key than `key`, or name content by anything but a SHA-256 and a plain
  /// extension (a tier counts such a copy as corrupt: never delivered).
  public init?(serialized: [UInt8], key: TierKey) {
    guard let record = Self.record(serialized, key: key.key) else { return nil }
    self.record = record
  }

  /// The record `bytes` hold when it parses, answers `key`, and names its content by a SHA-256
  /// with a plain extension (lower-case letters and digits); else `nil`.
  static func record(_ bytes: [UInt8], key: URLKey) -> CacheRecord? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let record = CacheRecord(decoding: text[...]), record.url == key.normalized else { return nil }
    let validation = record.validation
    let plain =
      !validation.fileExtension.isEmpty
      && validation.fileExtension.utf8.allSatisfy { byte in
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
      }
    guard CacheRecord.isSHA256(validation.sha256[...]), plain else { return nil }
    return record
  }
}
