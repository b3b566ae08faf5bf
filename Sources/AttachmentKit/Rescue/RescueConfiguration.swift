/// Whether and how near-miss images are turned into attachments (see ``ImageRescuer``): WebP,
/// HEIC/HEIF and AVIF converted, images over the byte or decoded-pixel limit downscaled.
///
/// Set ``PipelineConfiguration/rescue`` to an instance to turn rescue on; it is off (`nil`) by
/// default. Every limit here applies only to rescued sources; the delivered file still meets
/// ``ValidationLimits``.
public struct RescueConfiguration: Sendable, Equatable, Codable {
  /// The largest source a rescue downloads, in bytes; beyond it the download stops with
  /// `too_large`. Default: 50 MB. It applies only to images that will be rescued (an image's
  /// own limit is ``ValidationLimits/maximumImageBytes``).
  public var maximumSourceBytes: Int64 = 50_000_000

  /// The decode budget: the most pixels (width × height × frames) a source may have, read from
  /// its header before any pixel is decoded; more is refused with `too_many_pixels` at the
  /// cost of a header read. Default: 256 megapixels.
  public var maximumSourcePixels: Int64 = 256_000_000

  /// The most frames an animated source may have; more is refused with `too_complex` before
  /// any frame is decoded (each frame costs work of its own, whatever its size). Default: 2000.
  public var maximumFrames: Int = 2000

  /// The most pixels an animated rescue delivers, every frame together: the frames are
  /// downscaled to fit (GIF encoding quantizes every pixel, about 4 MP/s on a 2-core machine,
  /// and cannot be interrupted from outside at every step). Default: 8 megapixels (100 frames
  /// of 280 × 280).
  public var maximumAnimationPixels: Int64 = 8_000_000

  /// The most pixels an animated source may hold, every frame together; more is refused with
  /// `too_complex` before a frame is decoded (each frame is decoded whole: about 20 MP/s of
  /// WebP here). Default: 64 megapixels.
  public var maximumAnimationSourcePixels: Int64 = 64_000_000

  /// The most scans a JPEG source may have; more is refused with `too_complex` before it is
  /// decoded (every scan of a progressive JPEG is another pass over every coefficient, which
  /// libjpeg makes in one call that cannot be interrupted). Default: 100 (encoders write about
  /// 10).
  public var maximumScans: Int = 100

  /// The decode budget of a progressive JPEG, in pixels: its decoder holds every DCT
  /// coefficient until the last scan (about 3.4 bytes a pixel), so more is refused with
  /// `too_many_pixels`. Default: 50 megapixels (about 170 MiB).
  public var maximumProgressivePixels: Int64 = 50_000_000

  /// The most bytes a source over 8 MB may spend per decoded pixel (width × height × frames);
  /// more is refused with `too_complex` (no image format needs it: uncompressed 16-bit RGBA is
  /// 8). Default: 64.
  public var maximumBytesPerPixel: Int64 = 64

  /// The longest side of a rescued image, in pixels; larger images are downscaled to it.
  /// Default: 4096 (a notification shows far fewer pixels; iOS itself decodes the file).
  public var maximumDimension: Int = 4096

  /// Whether an animation is delivered animated (a GIF of its frames). `false`: its first
  /// frame is delivered as a still (JPEG, or PNG with alpha), as a target that shows no
  /// animation needs (``AttachmentProfile/android``). Default: `true`.
  public var keepsAnimation = true

  /// The longest side of an *accepted* still image, in pixels: an accepted image whose longest
  /// side is over it is downscaled to it (the rescuer's ``Rescuer/improvement(for:)``; GIFs are
  /// left as they are, animated), and when that fails the accepted original is delivered.
  /// `nil` (the default): accepted images are delivered as they are
  /// (``AttachmentProfile/iOSCompact(longestSide:)`` sets it).
  public var downscalesAcceptedOver: Int? = nil

  /// The JPEG quality of converted and downscaled photos, 1–100. Default: 85.
  public var jpegQuality: Int = 85

  /// How many threads libvips uses per image. Default: 2. Set once per process, by the first
  /// rescue (libvips keeps it globally).
  public var concurrency: Int = 2
  /// The worker processes the rescue runs in, and their kernel limits (see
  /// ``RescueWorkerConfiguration`` for the defaults).
  public var workers = RescueWorkerConfiguration()

  /// Makes the default rescue settings.
  public init() {}
}
