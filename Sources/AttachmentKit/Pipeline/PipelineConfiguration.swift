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
  /// Rescue of near-miss images (WebP, HEIC, AVIF converted; images over the byte or pixel
  /// limit downscaled) with libvips, or `nil` for none. Default: `nil` (off): such files are
  /// refused with `unsupported_type`, `too_large` or `too_many_pixels`. A rescued attachment's
  /// ``Validation/rescued`` says what was done; a caller with rescue off is never served a
  /// rescued copy from a shared cache (it gets the refusal the original would get).
  public var rescue: RescueConfiguration? = nil

  /// Makes a configuration with a cache in `cacheDirectory` (default: see
  /// ``CacheConfiguration/defaultDirectory()``) and default limits.
  public init(cacheDirectory: String = CacheConfiguration.defaultDirectory()) {
    cache = CacheConfiguration(directory: cacheDirectory)
    downloader = DownloaderConfiguration()
    limits = ValidationLimits()
  }
}
