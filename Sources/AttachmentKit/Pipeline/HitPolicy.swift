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
  /// The caller's rescuers (none: rescue is off).
  var rescuers: [any Rescuer]

  /// The policy of a pipeline configuration (with the body limit the pipeline really uses).
  init(configuration: PipelineConfiguration, limits effective: EffectiveLimits) {
    limits = configuration.limits
    maximumBodyBytes = effective.attachmentBytes
    allowPrivateNetworks = configuration.downloader.allowPrivateNetworks
    rescuers = configuration.rescuers
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
    if let rescued = validation.rescued {
      // A rescued derivative stands for the original only to a caller with the rescuer that
      // made it, and only within that rescuer's own source limits.
      guard let rescuer = rescuers.rescuer(named: rescued.rescuer) else { return originalVerdict(rescued) }
      if let refusal = rescuer.sourceRefusal(of: rescued) { return .refuse(refusal) }
    }
    let size = validation.bytes
    if size > maximumBodyBytes {
      return .refuse(
        AttachmentError(.tooLarge, "The body is \(size) bytes, over the limit of \(maximumBodyBytes)."))
    }
    // The validator's own rule, so a hit is refused with the code and message a download would get.
    if let violation = limits.violation(
      type: validation.type, bytes: size, durationSeconds: validation.durationSeconds,
      width: validation.width, height: validation.height)
    {
      // A file over this caller's limits may be rescued to fit them: download it again.
      if !rescuers.candidates(for: Refusal(violation, validation: validation)).isEmpty { return .undecided }
      return .refuse(violation)
    }
    // A video whose duration was not stored cannot be judged from the record.
    if validation.category == .video, validation.durationSeconds == nil { return .undecided }
    return .serve
  }

  /// The verdict a caller without the rescuer gets on a rescued derivative, from the
  /// original's typed verdict the provenance keeps (``Rescue/originalType``,
  /// ``Rescue/originalReason``), checked in the validator's order: no accepted type is
  /// `unsupported_type`; then its size, duration or pixels under this caller's limits; then a
  /// codec iOS does not decode is `unsupported_codec`. Undecided when this caller would accept
  /// the original, or the facts do not say (fetch it, and let the download decide).
  private func originalVerdict(_ rescued: Rescue) -> Verdict {
    guard let type = rescued.originalType else {
      return .refuse(
        AttachmentError(
          .unsupportedType,
          "The server sends \(rescued.from), not an accepted type; the cached copy was made from it by the \(rescued.rescuer) rescuer, which this caller does not use.",
          detected: rescued.from))
    }
    if let violation = limits.violation(
      type: type, bytes: rescued.originalBytes, durationSeconds: rescued.originalDurationSeconds,
      width: rescued.originalWidth, height: rescued.originalHeight)
    {
      return .refuse(violation)
    }
    if rescued.originalReason == .unsupportedCodec {
      let codecs =
        rescued.originalCodecs.isEmpty ? "" : " (\(rescued.originalCodecs.joined(separator: ", ")))"
      return .refuse(
        AttachmentError(
          .unsupportedCodec,
          "The server sends \(type.mime) in a codec iOS does not decode\(codecs); the cached copy was made from it by the \(rescued.rescuer) rescuer, which this caller does not use.",
          detected: rescued.from))
    }
    return .undecided
  }

  private static func describe(_ peer: PeerAddressClass) -> String {
    switch peer {
    case .public: "a public address"
    case .loopback: "a loopback address"
    case .private: "a private address"
    case .linkLocal: "a link-local address"
    }
  }
}
