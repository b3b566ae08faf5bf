/// The image rescuer on the rescue seam: which refusals it undoes, when libvips is worth
/// starting early, and how a cached derivative's source is judged against its limits.
extension ImageRescuer: Rescuer {
  /// `"image"`: see ``ImageRescuer/name-swift.type.property``.
  public var name: String { Self.name }

  /// ``RescueConfiguration/maximumSourceBytes``.
  public var maximumSourceBytes: Int64 { configuration.maximumSourceBytes }

  /// A type libvips converts (``convertibleTypes``) refused as not an accepted format, an
  /// accepted image type whose structure is not valid (``reencodedTypes``), an image over its
  /// decoded-pixel limit, or an image over its byte limit.
  public func canRescue(_ refusal: Refusal) -> Bool {
    switch refusal.reason {
    case .unsupportedFormat:
      refusal.format.map { Self.convertibleTypes.contains($0) || Self.reencodedTypes.contains($0) } ?? false
    case .tooManyPixels: true
    case .tooLarge: refusal.category == .image
    default: false
    }
  }

  /// An accepted still image whose longest side is over
  /// ``RescueConfiguration/downscalesAcceptedOver``, as the refusal the downscale undoes (a GIF
  /// is left as it is, animated); `nil` for any other file, or when that setting is off.
  public func improvement(for validation: Validation) -> Refusal? {
    guard let limit = configuration.downscalesAcceptedOver, validation.category == .image,
      validation.type != .gif, let width = validation.width, let height = validation.height,
      max(width, height) > limit
    else { return nil }
    let error = AttachmentError(
      .tooManyPixels,
      "The image is \(width)×\(height) pixels, over the \(limit) delivered on its longest side.")
    return Refusal(error, validation: validation)
  }

  /// Starts a rescue worker loading libvips (``RescueWorkers``), for a refusal the first bytes
  /// already call for. Returns `nil`: nothing in this process waits for it.
  public func prepare(for refusal: Refusal) -> (any RescuePreparation)? {
    WorkerPool.pool(for: configuration.workers, library: .libvips).prestart()
    return nil
  }

  /// Converts or downscales the job's source with libvips in a rescue worker (see
  /// `convert(_:)`, which the worker runs, and `WorkerPool.run(_:as:)` for what the worker
  /// adds: `deadline_exceeded` and `cancelled` at once, a crash or the memory ceiling as the
  /// refusal with why it was not rescued).
  public func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    try checkWebPFrames(job)
    return try WorkerPool.pool(for: configuration.workers, library: .libvips).run(
      job, as: .image(configuration, limits))
  }

  /// `too_large` for a source over ``RescueConfiguration/maximumSourceBytes``, `too_many_pixels`
  /// for one over ``RescueConfiguration/maximumSourcePixels``; `nil` otherwise.
  public func sourceRefusal(of provenance: Rescue) -> AttachmentError? {
    if provenance.originalBytes > configuration.maximumSourceBytes {
      return AttachmentError(
        .tooLarge,
        "The image is \(provenance.originalBytes) bytes, over the rescue's source limit of \(configuration.maximumSourceBytes)."
      )
    }
    let width = Int64(provenance.originalWidth ?? 0)
    let height = Int64(provenance.originalHeight ?? 0)
    let pixels = width.multipliedReportingOverflow(by: height)
    if pixels.overflow || pixels.partialValue > configuration.maximumSourcePixels {
      return AttachmentError(
        .tooManyPixels,
        "The image is \(width)×\(height) pixels, over the rescue's decode budget of \(configuration.maximumSourcePixels) pixels.",
        detected: provenance.from)
    }
    return nil
  }
}
