/// One request for an attachment: what every face (the command line, serve, the extension
/// runner, the benchmarks) builds and ``AttachmentPipeline/attachment(_:)`` takes: the URL and
/// its alternatives, the deadline, the profile, the cache policy and the thumbnail options.
///
/// ```swift
/// var request = try AttachmentRequest(url: payloadURL, timeout: .seconds(25))
/// request.profile = .android
/// request.alternatives = [try AttachmentURL(backupURL)]
/// let attachment = try await pipeline.attachment(request)
/// ```
public struct AttachmentRequest: Sendable {
  /// Whether the cache may answer.
  public enum CachePolicy: Sendable, Equatable {
    /// Answer from the cache when it holds a fresh copy this caller accepts (the default).
    case useCache
    /// Skip the cache lookup and download again, like a browser's reload; the answer still
    /// refreshes the cache.
    case reload
  }

  /// The URL asked for, checked once.
  public var url: AttachmentURL
  /// The absolute instant by which the answer comes: cache lookup, redirects, download,
  /// validation, rescue and every alternative included.
  public var deadline: ContinuousClock.Instant
  /// The target the file is made for (``AttachmentProfile/ios`` by default): its limits and
  /// output rules, and the key space its files are cached in.
  public var profile: AttachmentProfile
  /// Whether the cache may answer (``CachePolicy/useCache`` by default).
  public var cachePolicy: CachePolicy
  /// URLs tried in order, each only after ``url`` and every earlier one failed or was refused,
  /// within the same ``deadline`` (a stop, the deadline or cancellation, ends the request at
  /// once). Empty by default.
  public var alternatives: [AttachmentURL]
  /// The thumbnail options the caller gives (a payload's `options`): checked against the file
  /// the answer holds and delivered as ``Attachment/thumbnail`` (see
  /// ``ThumbnailOptions/checked(against:)``). None by default: a video then gets the proposed
  /// poster time alone, when there is one.
  public var thumbnail: ThumbnailOptions

  /// Makes a request for `url`, answered by `deadline`.
  public init(
    url: AttachmentURL, deadline: ContinuousClock.Instant, profile: AttachmentProfile = .ios,
    cachePolicy: CachePolicy = .useCache, alternatives: [AttachmentURL] = [],
    thumbnail: ThumbnailOptions = ThumbnailOptions()
  ) {
    self.url = url
    self.deadline = deadline
    self.profile = profile
    self.cachePolicy = cachePolicy
    self.alternatives = alternatives
    self.thumbnail = thumbnail
  }

  /// Makes a request for the URL `text`, answered by `deadline`.
  /// - Throws: `invalid_url` or `unsupported_scheme` (see ``AttachmentURL/init(_:)``).
  public init(
    url text: String, deadline: ContinuousClock.Instant, profile: AttachmentProfile = .ios,
    cachePolicy: CachePolicy = .useCache
  ) throws(AttachmentError) {
    self.init(url: try AttachmentURL(text), deadline: deadline, profile: profile, cachePolicy: cachePolicy)
  }

  /// Makes a request for `url` (checked already), answered within `timeout` from now.
  public init(
    url: AttachmentURL, timeout: Duration, profile: AttachmentProfile = .ios,
    cachePolicy: CachePolicy = .useCache
  ) {
    self.init(url: url, deadline: .now + timeout, profile: profile, cachePolicy: cachePolicy)
  }

  /// Makes a request for the URL `text`, answered within `timeout` from now.
  /// - Throws: `invalid_url` or `unsupported_scheme` (see ``AttachmentURL/init(_:)``).
  public init(
    url text: String, timeout: Duration, profile: AttachmentProfile = .ios,
    cachePolicy: CachePolicy = .useCache
  ) throws(AttachmentError) {
    try self.init(url: text, deadline: .now + timeout, profile: profile, cachePolicy: cachePolicy)
  }
}
