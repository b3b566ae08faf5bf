/// How a video that cannot be made playable in time becomes a still: the settings of
/// ``PosterRescuer``, which delivers a JPEG of the video's first frame that is not nearly black.
///
/// The poster has its own small budget: it decodes at most ``maximumDecodedFrames`` frames and
/// takes at most ``maximumSeconds`` of the time left, so that it fits in what a failed media
/// rescue leaves (``MediaRescueConfiguration/fallbackReserve``).
public struct PosterConfiguration: Sendable, Equatable, Codable {
  /// The longest side of the poster, in pixels; the frame is scaled down into a square of this
  /// side, its display aspect kept. Default: 1280 (what a notification shows at most).
  public var maximumEdge: Int = 1280

  /// The most frames decoded looking for one that is not nearly black (a fade-in, a black
  /// leader); past it, the brightest seen is used. Default: 150 (5 s at 30 fps).
  public var maximumDecodedFrames: Int = 150

  /// A frame whose mean luma (0–255, full range) is under this is nearly black. Default: 40 (a sixth of full white; a fade-in passes it part-way).
  public var darkLuma: Int = 40

  /// The most time a poster takes, in seconds, within the job's deadline. Default: 3.
  public var maximumSeconds: Double = 3

  /// The most frames of an image sequence (an AVIF or HEIF sequence) made into an animated
  /// GIF; a longer sequence gets a still of its first frame. Default: 300.
  public var maximumAnimationFrames: Int = 300

  /// The most pixels an image sequence's animated GIF holds, every frame together: the frames
  /// are scaled down to fit, as the image rescue's animations are
  /// (``RescueConfiguration/maximumAnimationPixels``). Default: 8 megapixels.
  public var maximumAnimationPixels: Int64 = 8_000_000

  /// The most time, in seconds, an image sequence's animation takes within the job's deadline,
  /// before ``maximumSeconds`` for the still it falls back to. Default: 6.
  public var maximumAnimationSeconds: Double = 6

  /// The source limits it shares with the media rescue (bytes, duration, frame pixels,
  /// tracks) and the worker processes it runs in: a poster decodes untrusted video too.
  public var source = MediaRescueConfiguration()

  /// Makes the default poster settings.
  public init() {}
}
