/// The standard rescuers in their fallback order, as every face of AttachmentKit builds them
/// (`fetch`, `prefetch` and `serve` with `--rescue`, `attachkit rescue`, the extension runner):
/// ``ImageRescuer`` (libvips), ``MediaRescuer`` (FFmpeg), then ``PosterRescuer``, which a video
/// the media rescue cannot make playable in the time left falls back to.
public enum StandardRescuers {
  /// The list, in order. With a poster (`poster` not `nil`, the default), the media rescue of
  /// a video keeps the poster's time at the end of each deadline
  /// (``MediaRescueConfiguration/fallbackReserve``) and starts a transcode only when its
  /// estimate fits the rest, so that a video too slow to transcode still gets a poster.
  /// `poster: nil` turns posters off.
  /// - Parameters:
  ///   - image: the image rescue's settings.
  ///   - limits: what the image rescue's outputs must meet.
  ///   - media: the media rescue's settings; the poster shares its source limits and workers.
  ///   - poster: the poster's settings; `nil` turns posters off.
  /// - Returns: the rescuers, in the order they are tried.
  public static func make(
    image: RescueConfiguration = RescueConfiguration(), limits: ValidationLimits = ValidationLimits(),
    media: MediaRescueConfiguration = MediaRescueConfiguration(),
    poster: PosterConfiguration? = PosterConfiguration()
  ) -> [any Rescuer] {
    let imageRescuer = ImageRescuer(configuration: image, limits: limits)
    guard var poster else { return [imageRescuer, MediaRescuer(configuration: media)] }
    var media = media
    let reserve = Duration.nanoseconds(Int64((max(0, poster.maximumSeconds) * 1e9).rounded()))
    media.fallbackReserve = max(media.fallbackReserve, reserve)
    var source = media
    source.fallbackReserve = .zero
    poster.source = source
    return [imageRescuer, MediaRescuer(configuration: media), PosterRescuer(configuration: poster)]
  }
}
