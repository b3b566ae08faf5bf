/// A file ready to attach to a notification: where it is, what it is, and how it was obtained.
public struct Attachment: Sendable {
  /// Where the answer came from.
  public enum Source: String, Sendable, Codable {
    /// Downloaded now.
    case network
    /// Served from the cache without contacting the server.
    case cache
    /// The cached copy was confirmed by the server (`304 Not Modified`).
    case revalidated
  }

  /// The URL asked for, with any credentials redacted.
  public var url: String
  /// The local file, named with the canonical extension (what `UNNotificationAttachment`
  /// needs). Inside the cache: treat it as read-only, copy it to keep it.
  public var path: String
  /// The validation result: type, UTI, size, SHA-256, dimensions or duration, warnings.
  public var validation: Validation
  /// Where the answer came from.
  public var source: Source
  /// Whether a stale cached copy was served because the network failed (stale-if-error).
  public var isStale: Bool
  /// Body bytes moved over the network for this answer (0 for a cache hit).
  public var bytesTransferred: Int64
  /// Phase times of the network transfer, when there was one.
  public var transferTimings: TransferTimings?
  /// Wall time of the whole call, in microseconds.
  public var totalMicroseconds: Int64
  /// Until when the origin's freshness lasts, in seconds since 1970 (what a proxy turns into
  /// `Cache-Control: max-age`); `nil` when the copy was not kept (the origin said `no-store`).
  public var freshUntil: Double? = nil
  /// The origin's `Last-Modified`, as it sent it (a proxy passes it on).
  public var lastModified: String? = nil
  /// The origin's `Cache-Control` (after a revalidation, the `304`'s when it sent one, else
  /// the stored one): what a proxy reads `private`, `no-cache` and `s-maxage` from.
  public var cacheControl: String? = nil
  /// When the copy was received or last revalidated, in seconds since 1970 (the age a proxy
  /// takes off `s-maxage`).
  public var fetchedAt: Double? = nil
  /// The thumbnail options to give iOS with the file: the request's, checked against this file,
  /// and for a video given no time the proposed poster time (``ThumbnailOptions/timeIsProposed``).
  public var thumbnail = ThumbnailOptions()
  /// Why a thumbnail option of the request was dropped, one sentence each (`time 9 s is past the
  /// video's duration of 2 s: thumbnailTime dropped`); empty when none was.
  public var thumbnailProblems: [String] = []
  /// Which of the request's ``AttachmentRequest/alternatives`` answered (its index), `nil`
  /// when the request's own URL did.
  public var alternative: Int? = nil
  /// Why each source tried before the one that answered failed, in order (the request's URL
  /// first); empty when the request's own URL answered.
  public var failures: [AttachmentError] = []
  /// Whether the file is this answer's alone, outside the cache's index (the origin said
  /// `no-store`, or `private` to a shared cache): ``AttachmentPipeline/release(_:)`` removes it.
  public var isUnindexed = false

  /// The media type.
  public var type: MediaType { validation.type }
  /// The UTI to pass as the type hint.
  public var uti: String { validation.uti }
  /// Image, video or audio.
  public var category: MediaType.Category { validation.category }
  /// The file size, in bytes.
  public var bytes: Int64 { validation.bytes }
  /// The SHA-256 of the file.
  public var sha256: String { validation.sha256 }
  /// Warnings worth showing (types outside Apple's table, a stale copy).
  public var warnings: [String] { validation.warnings }
}
