import AttachmentKit
import Foundation

// Foundation's `URL` for callers who hold one (Nuke and Kingfisher users do). A module of its
// own: AttachmentKit itself never imports Foundation, so that a cache hit maps none of it.

extension AttachmentRequest {
  /// A request for `url` (its `absoluteString`) by `deadline`, under `profile` and
  /// `cachePolicy`; the other fields at their defaults (set them on the value).
  /// - Throws: `invalid_url` or `unsupported_scheme` when `url` is no http(s) URL with a host
  ///   (a file URL, a relative one).
  public init(
    url: URL, deadline: ContinuousClock.Instant, profile: AttachmentProfile = .ios,
    cachePolicy: CachePolicy = .useCache
  ) throws(AttachmentError) {
    try self.init(url: url.absoluteString, deadline: deadline, profile: profile, cachePolicy: cachePolicy)
  }
}

extension AttachmentPipeline {
  /// The attachment for `url` by `deadline`: ``AttachmentKit/AttachmentPipeline/attachment(for:deadline:)``
  /// with Foundation's URL (its `absoluteString`), with the same results and errors.
  public func attachment(for url: URL, deadline: ContinuousClock.Instant) async throws(AttachmentError)
    -> Attachment
  {
    try await attachment(for: url.absoluteString, deadline: deadline)
  }

  /// The attachment for `url` within `timeout` from now (`.seconds(25)` leaves headroom in a
  /// Notification Service Extension's 30 s): see ``attachment(for:deadline:)``.
  public func attachment(for url: URL, timeout: Duration) async throws(AttachmentError) -> Attachment {
    try await attachment(for: url.absoluteString, timeout: timeout)
  }
}
