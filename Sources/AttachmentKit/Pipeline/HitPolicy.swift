/// Judges a cache entry's stored facts against one pipeline's policy: a hit is served only
/// when this caller's limits and address policy would have accepted the download it stands
/// for, and refused with the same code the download would have got otherwise.
///
/// The cache stores facts (category, bytes, duration, pixels, the peer's address class); the
/// pipeline judges them here, so callers with different limits can share one cache.
struct HitPolicy: Sendable {
  /// What the stored facts say about a hit.
  enum Verdict {
    /// The download would have been accepted: serve the hit.
    case serve
    /// The download would have been refused with this error; no request is needed.
    case refuse(AttachmentError)
    /// The facts do not decide (a video whose duration was not stored, a record without the
    /// peer's class for a caller that refuses private networks): treat as a miss and let
    /// the download and the validator decide.
    case undecided
  }

  /// The validation limits of the caller.
  var limits: ValidationLimits
  /// The body limit of the caller's downloads, in bytes.
  var maximumBodyBytes: Int64
  /// Whether the caller accepts loopback, private and link-local peers.
  var allowPrivateNetworks: Bool

  /// The policy of a pipeline configuration (with the body limit the pipeline really uses).
  init(configuration: PipelineConfiguration) {
    limits = configuration.limits
    maximumBodyBytes = min(
      configuration.downloader.maximumBodyBytes, configuration.limits.largestMaximumBytes)
    allowPrivateNetworks = configuration.downloader.allowPrivateNetworks
  }

  /// The verdict on a record, checked in the order a download meets the same limits:
  /// the address (at connect), the body limit, then the validator's size, duration and
  /// pixel limits.
  func verdict(on record: CacheRecord) -> Verdict {
    if !allowPrivateNetworks {
      guard let peer = record.peer else { return .undecided }
      if !peer.isPublic {
        return .refuse(
          AttachmentError(
            .blockedAddress,
            "The cached copy came from \(Self.describe(peer)); private networks are not allowed (see allowPrivateNetworks)."
          ))
      }
    }
    let validation = record.validation
    let size = validation.bytes
    if size > maximumBodyBytes {
      return .refuse(
        AttachmentError(.tooLarge, "The body is \(size) bytes, over the limit of \(maximumBodyBytes)."))
    }
    let category = validation.category
    let maximum = limits.maximumBytes(for: category)
    if size > maximum {
      return .refuse(
        AttachmentError(.tooLarge, "The \(category.rawValue) is \(size) bytes, over the limit of \(maximum).")
      )
    }
    if category == .video {
      guard let seconds = validation.durationSeconds else { return .undecided }
      if seconds > limits.maximumVideoSeconds {
        return .refuse(
          AttachmentError(
            .tooLong,
            "The video lasts \(Self.format(seconds)) s, over the limit of \(Self.format(limits.maximumVideoSeconds)) s."
          ))
      }
    }
    if category == .image, let width = validation.width, let height = validation.height {
      let (pixels, overflow) = Int64(width).multipliedReportingOverflow(by: Int64(height))
      let (decoded, overflow4) = pixels.multipliedReportingOverflow(by: 4)
      if overflow || overflow4 || decoded > limits.maximumDecodedImageBytes {
        return .refuse(
          AttachmentError(
            .tooManyPixels,
            "The image is \(width)×\(height) pixels: decoded it needs \(decoded) bytes, over \(limits.maximumDecodedImageBytes)."
          ))
      }
    }
    return .serve
  }

  private static func describe(_ peer: PeerAddressClass) -> String {
    switch peer {
    case .public: "a public address"
    case .loopback: "a loopback address"
    case .private: "a private address"
    case .linkLocal: "a link-local address"
    }
  }

  private static func format(_ seconds: Double) -> String {
    String((seconds * 10).rounded() / 10)
  }
}
