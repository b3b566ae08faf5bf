/// Everything an ``AttachmentPipeline`` needs: the cache, the downloader's limits, the
/// validation limits, and how stale entries are handled.
public struct PipelineConfiguration: Sendable {
  /// The on-disk cache.
  public var cache: CacheConfiguration
  /// Limits of every transfer (the body limit is raised or lowered to fit ``limits``).
  public var downloader: DownloaderConfiguration
  /// What an attachment must meet.
  public var limits: ValidationLimits
  /// When the network fails before the deadline and a stale cached copy exists, answer with
  /// it (marked ``Attachment/isStale``) instead of failing. Default: `false`.
  public var useStaleOnError = false

  /// Makes a configuration with a cache in `cacheDirectory` (default: see
  /// ``CacheConfiguration/defaultDirectory()``) and default limits.
  public init(cacheDirectory: String = CacheConfiguration.defaultDirectory()) {
    cache = CacheConfiguration(directory: cacheDirectory)
    downloader = DownloaderConfiguration()
    limits = ValidationLimits()
  }
}
