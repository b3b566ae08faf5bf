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
}
