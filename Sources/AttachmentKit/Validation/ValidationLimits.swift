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
    category: MediaType.Category, bytes: Int64, durationSeconds: Double?, width: Int?, height: Int?
  ) -> AttachmentError? {
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
    }
    return nil
  }

  /// Seconds to a tenth, for messages: `30.0`, `45.2`.
  static func tenths(_ seconds: Double) -> String { String((seconds * 10).rounded() / 10) }
}
