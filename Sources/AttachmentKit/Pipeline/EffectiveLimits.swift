/// The body limits one pipeline really uses, computed once from its configuration: the
/// streaming check, the complete-file check and the hit policy all read these values, so
/// they never disagree.
struct EffectiveLimits: Sendable, Equatable {
  /// The largest body an attachment may be, in bytes: the downloader's limit, lowered to the
  /// largest category limit (no attachment can be larger).
  let attachmentBytes: Int64
  /// The largest body a transfer may move, in bytes: ``attachmentBytes``, raised to the
  /// largest source a rescuer downloads (a source to rescue may be larger than any attachment;
  /// the rescue inspector holds each to its own rescuer's limit).
  let transferBytes: Int64

  /// The limits of `configuration`.
  init(_ configuration: PipelineConfiguration) {
    attachmentBytes = min(configuration.downloader.maximumBodyBytes, configuration.limits.largestMaximumBytes)
    transferBytes = max(attachmentBytes, configuration.rescuers.largestSourceBytes)
  }
}
