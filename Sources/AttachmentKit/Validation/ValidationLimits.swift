/// The limits an attachment must meet. Defaults follow Apple's published sizes and the
/// product's documents.
public struct ValidationLimits: Sendable, Equatable, Codable {
  /// The largest image, in bytes. Default: 10 MB.
  public var maximumImageBytes: Int64 = MediaType.Category.image.defaultMaximumBytes
  /// The largest audio file, in bytes. Default: 5 MB.
  public var maximumAudioBytes: Int64 = MediaType.Category.audio.defaultMaximumBytes
  /// The largest video, in bytes. Default: 50 MB.
  public var maximumVideoBytes: Int64 = MediaType.Category.video.defaultMaximumBytes
  /// The longest video, in seconds (checked where the container says its duration).
  /// Default: 30 s.
  public var maximumVideoSeconds: Double = 30
  /// The largest decoded image (width × height × 4 bytes), in bytes. Default: 64 MiB; an
  /// extension has about 24 MB in all.
  public var maximumDecodedImageBytes: Int64 = 64 * 1024 * 1024
  /// The types accepted; `nil` (the default): every type the validator accepts. A profile
  /// narrows it (``AttachmentProfile/android`` takes JPEG and PNG only); any other type is
  /// refused with `unsupported_type`, from its first bytes, naming ``profileName``.
  public var acceptedTypes: Set<MediaType>? = nil
  /// The longest side an image may have, in pixels; longer is refused with `too_many_pixels`
  /// (which the image rescuer undoes by downscaling). `nil` (the default): no such limit.
  public var maximumImageDimension: Int? = nil
  /// The profile these limits are part of, named in the refusals of its own rules
  /// (``acceptedTypes``, ``maximumImageDimension``); `nil` (the default) for none.
  public var profileName: String? = nil

  /// Makes the default limits.
  public init() {}

  /// The size limit of a category, in bytes.
  public func maximumBytes(for category: MediaType.Category) -> Int64 {
    switch category {
    case .image: maximumImageBytes
    case .audio: maximumAudioBytes
    case .video: maximumVideoBytes
    }
  }

  /// The largest limit of any category: what a body may reach before its type is known.
  public var largestMaximumBytes: Int64 {
    max(maximumImageBytes, maximumAudioBytes, maximumVideoBytes)
  }

  /// The limit a file with these facts breaks, in the order a download meets them (size, then
  /// duration when it is known, then decoded pixels), as the error that refuses it; `nil` when
  /// it keeps every limit. The validator judges new files with it and the pipeline judges
  /// cache hits with it, so both give the same code and message.
  func violation(
    type: MediaType, bytes: Int64, durationSeconds: Double?, width: Int?, height: Int?
  ) -> AttachmentError? {
    if let refusal = typeRefusal(type) { return refusal }
    let category = type.category
    let maximum = maximumBytes(for: category)
    if bytes > maximum {
      return AttachmentError(
        .tooLarge, "The \(category.rawValue) is \(bytes) bytes, over the limit of \(maximum).")
    }
    if category == .video, let seconds = durationSeconds, seconds > maximumVideoSeconds {
      return AttachmentError(
        .tooLong,
        "The video lasts \(Self.tenths(seconds)) s, over the limit of \(Self.tenths(maximumVideoSeconds)) s.")
    }
    if category == .image, let width, let height {
      let (pixels, overflow) = Int64(width).multipliedReportingOverflow(by: Int64(height))
      let (decoded, overflow4) = pixels.multipliedReportingOverflow(by: 4)
      if overflow || overflow4 || decoded > maximumDecodedImageBytes {
        return AttachmentError(
          .tooManyPixels,
          "The image is \(width)×\(height) pixels: decoded it needs \(decoded) bytes, over \(maximumDecodedImageBytes)."
        )
      }
      if let limit = maximumImageDimension, max(width, height) > limit {
        return AttachmentError(
          .tooManyPixels,
          "The image is \(width)×\(height) pixels, over \(profilePhrase)'s \(limit) on its longest side.")
      }
    }
    return nil
  }

  /// The refusal of a file of `type` when ``acceptedTypes`` leaves it out, else `nil`: what the
  /// first bytes already decide.
  func typeRefusal(_ type: MediaType) -> AttachmentError? {
    guard let accepted = acceptedTypes, !accepted.contains(type) else { return nil }
    return typeRefusal(mime: type.mime, accepted: accepted)
  }

  /// The refusal of a file of `format` whose first bytes do not tell its type yet (ISO BMFF:
  /// an MP4, a MOV or an M4A) when ``acceptedTypes`` takes no type of any category it may be,
  /// else `nil`; a format of one type is judged as that type.
  func typeRefusal(_ format: ProbedFormat) -> AttachmentError? {
    if let type = format.row.mediaType { return typeRefusal(type) }
    guard let accepted = acceptedTypes,
      !format.categories.contains(where: { category in accepted.contains { $0.category == category } })
    else { return nil }
    return typeRefusal(mime: format.row.magicNames.first ?? "application/octet-stream", accepted: accepted)
  }

  private func typeRefusal(mime: String, accepted: Set<MediaType>) -> AttachmentError {
    let names = MediaType.allCases.filter(accepted.contains).map { $0.rawValue.uppercased() }
    return AttachmentError(
      .unsupportedType,
      "\(profilePhrase.prefix(1).uppercased() + profilePhrase.dropFirst()) takes \(names.joined(separator: " and ")) only; this is \(mime).",
      detected: mime)
  }

  /// `the android profile`, or `this caller` without a profile name.
  private var profilePhrase: String { profileName.map { "the \($0) profile" } ?? "this caller" }

  /// Seconds to a tenth, for messages: `30.0`, `45.2`.
  static func tenths(_ seconds: Double) -> String { String((seconds * 10).rounded() / 10) }
}
