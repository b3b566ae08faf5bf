/// Whether and how near-miss images are turned into attachments (see ``ImageRescuer``): WebP,
/// HEIC/HEIF and AVIF converted, images over the byte or decoded-pixel limit downscaled.
///
/// Set ``PipelineConfiguration/rescue`` to an instance to turn rescue on; it is off (`nil`) by
/// default. Every limit here applies only to rescued sources; the delivered file still meets
/// ``ValidationLimits``.
public struct RescueConfiguration: Sendable, Equatable {
  /// The largest source a rescue downloads, in bytes; beyond it the download stops with
  /// `too_large`. Default: 50 MB. It applies only to images that will be rescued (an image's
  /// own limit is ``ValidationLimits/maximumImageBytes``).
  public var maximumSourceBytes: Int64 = 50_000_000

  /// The decode budget: the most pixels (width × height × frames) a source may have, read from
  /// its header before any pixel is decoded; more is refused with `too_many_pixels` at the
  /// cost of a header read. Default: 256 megapixels.
  public var maximumSourcePixels: Int64 = 256_000_000

  /// The longest side of a rescued image, in pixels; larger images are downscaled to it.
  /// Default: 4096 (a notification shows far fewer pixels; iOS itself decodes the file).
  public var maximumDimension: Int = 4096

  /// The JPEG quality of converted and downscaled photos, 1–100. Default: 85.
  public var jpegQuality: Int = 85

  /// How many threads libvips uses per image. Default: 2. Set once per process, by the first
  /// rescue (libvips keeps it globally).
  public var concurrency: Int = 2

  /// Makes the default rescue settings.
  public init() {}
}
