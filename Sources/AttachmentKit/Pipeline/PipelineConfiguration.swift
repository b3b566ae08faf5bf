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
  /// Adds the ``TransportSecurity`` (`ats`) warning to an accepted file fetched over plain
  /// HTTP (the URL asked for, or the last of its redirects), which a device's own download
  /// would not be allowed to make. Stored with the entry, so its hits carry it too. A proxy
  /// whose devices download from an HTTPS address of its own may turn it off. Default: `true`.
  public var warnsAboutTransportSecurity = true
  /// The rescuers asked, in order, to turn a refused body into an attachment (see
  /// ``Rescuer``). Default: none: a refused file is refused. A rescued attachment's
  /// ``Validation/rescued`` says what was done; a caller without the rescuer that made a
  /// cached derivative is never served it from a shared cache (it gets the refusal the
  /// original would get).
  public var rescuers: [any Rescuer] = []
  /// Whether (and how) a video's poster time is proposed on a miss (``Validation/posterTimeSeconds``,
  /// found in a rescue worker within a small budget of its own: see
  /// ``PosterTimeConfiguration``). Default: `nil`, none: a caller that never asked starts no
  /// worker process. `attachkit` turns it on with `--rescue` (the workers are then in use), the
  /// extension runner with its rescue. A hit never proposes one: an entry cached without it
  /// stays without it until it is fetched again.
  public var posterTime: PosterTimeConfiguration? = nil
  /// The decode check an audio or video miss passes after its structural checks: FFmpeg opens
  /// it and starts each stream it plays, in a rescue worker (``DecodeCheckConfiguration``;
  /// "accepted" means a decoder starts it). Default: on. A hit never checks; linear PCM,
  /// A-law, μ-law and images never start a worker; without a worker the file is accepted on
  /// its structure with a warning. `nil`: the probes alone judge. A rescued file is not checked
  /// again: each stream a rescue copies is decoded before it is delivered, and the others are
  /// its own encoders'.
  public var decodeCheck: DecodeCheckConfiguration? = DecodeCheckConfiguration()

  /// An S3-compatible object store as the cache's second tier, shared by a fleet of
  /// instances: a local miss looks there before the origin, and what the origin gave (fetched,
  /// checked, rescued) is written there in the background (see ``StoreConfiguration``).
  /// Default: `nil`, none.
  public var store: StoreConfiguration? = nil

  /// Another second tier behind the local cache (any ``SharedTier``: a second ``AttachmentCache``
  /// on a shared or longer-lived disk, a store of the operator's own), used when ``store`` is
  /// `nil`: a local miss reads it before the origin, within the same share of the time left (a
  /// quarter, at most 3 s), and what a miss published is written to it. One miss per fleet (the
  /// store's leases) and the store's counters are the object store's alone. Default: `nil`.
  public var sharedTier: (any SharedTier)? = nil

  /// The image rescuer's settings (WebP, HEIC, AVIF converted; images over the byte or pixel
  /// limit downscaled, with libvips), or `nil` when ``rescuers`` holds no ``ImageRescuer``.
  /// Setting it replaces the image rescuer in ``rescuers`` (or removes it, for `nil`); without
  /// it such files are refused with `unsupported_type`, `too_large` or `too_many_pixels`.
  public var rescue: RescueConfiguration? {
    get { rescuers.lazy.compactMap { $0 as? ImageRescuer }.first?.configuration }
    set {
      let index = rescuers.firstIndex { $0 is ImageRescuer } ?? rescuers.endIndex
      rescuers.removeAll { $0 is ImageRescuer }
      if let newValue {
        rescuers.insert(
          ImageRescuer(configuration: newValue, limits: limits), at: min(index, rescuers.endIndex))
      }
    }
  }

  /// Makes a configuration with a cache in `cacheDirectory` (default: see
  /// ``CacheConfiguration/defaultDirectory()``) and default limits.
  public init(cacheDirectory: String = CacheConfiguration.defaultDirectory()) {
    cache = CacheConfiguration(directory: cacheDirectory)
    downloader = DownloaderConfiguration()
    limits = ValidationLimits()
  }
}
