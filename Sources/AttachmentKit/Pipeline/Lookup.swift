/// What the cache holds for one URL under one pipeline's policy: the first step of every
/// request, taken once (``AttachmentPipeline/lookup(_:)``), and what the rest of the
/// request continues from (``AttachmentPipeline/attachment(_:after:)``).
public enum Lookup: Sendable {
  /// A fresh copy this caller's policy accepts: the answer, with no network.
  case hit(Attachment)
  /// A fresh record whose facts this caller's policy refuses: the answer is this error, with
  /// no network (the download it stands for would have been refused the same way).
  case refused(AttachmentError)
  /// A copy past its freshness, or one to confirm with the origin under this caller's URL
  /// (`CachedCopy.confirming`): revalidate it (a `304` keeps it), or serve it if the network
  /// fails and the caller allows stale-if-error (never one being confirmed).
  case stale(CachedCopy)
  /// Nothing usable: download.
  case miss

  /// The answer when the lookup alone gives one (a hit or a refusal), else `nil`.
  public var answer: Result<Attachment, AttachmentError>? {
    switch self {
    case .hit(let attachment): .success(attachment)
    case .refused(let error): .failure(error)
    case .stale, .miss: nil
    }
  }
}

/// A cached copy past its freshness, as ``Lookup/stale(_:)`` hands it on.
public struct CachedCopy: Sendable {
  /// The entry: its record and its content file.
  let entry: CacheEntry
  /// Whether the copy is fresh but was fetched with another URL than this caller's, in
  /// parameters its key leaves out (a presigned URL's signature): the origin confirms it with
  /// the caller's URL before it answers, and no stale copy stands in for a refusal
  /// (``HitConfirmation``).
  var confirming = false

  /// What the copy was validated as when it was stored.
  public var validation: Validation { entry.record.validation }
  /// Until when it was fresh, in seconds since 1970 (now past).
  public var freshUntil: Double { entry.record.freshUntil }
}
