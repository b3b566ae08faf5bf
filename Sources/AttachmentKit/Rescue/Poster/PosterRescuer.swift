/// The last resort for a video: when no playable file can be made of it in the time left (the
/// media rescue's transcode estimate is over the time left, or its transcode failed or was
/// stopped to leave this rescuer its time), a JPEG still of its first frame that is not nearly
/// black is delivered, with `actions: ["poster"]`: an image attachment rather than a bare
/// notification. Put it after ``MediaRescuer`` in a list (``StandardRescuers`` does); leave
/// it out to turn posters off.
///
/// The frame is decoded with FFmpeg's libraries in a rescue worker, like the media rescue's
/// (the same allowlists, source limits and kernel bounds), within the poster's own budget
/// (``PosterConfiguration``); damaged frames are skipped, not concealed.
public struct PosterRescuer: Sendable {
  /// The poster's settings.
  public var configuration: PosterConfiguration

  /// Makes a poster rescuer.
  public init(configuration: PosterConfiguration = PosterConfiguration()) {
    self.configuration = configuration
  }

  /// This rescuer's ``Rescuer/name``, stored with every poster it delivers.
  public static let name = "poster"
}

extension Rescue.Action {
  /// A still of the video was delivered instead of the video (``PosterRescuer``).
  public static let poster = Self(rawValue: "poster")
}

extension PosterRescuer: Rescuer {
  /// `"poster"`: see ``PosterRescuer/name-swift.type.property``.
  public var name: String { Self.name }

  /// The media rescue's source limit (``PosterConfiguration/source``).
  public var maximumSourceBytes: Int64 { configuration.source.maximumSourceBytes }

  /// A video refusal the media rescue would try: too long, too large, a codec iOS does not
  /// decode, or a foreign video container FFmpeg reads (WebM, Matroska, AVI, MPEG-TS, FLV,
  /// ASF, 3GPP); and an image sequence FFmpeg reads (an AVIF, HEIF or HEIC sequence, which
  /// libheif does not: the image rescue fails first), delivered as an animated GIF
  /// (`SequenceAnimation`) or, past its budget, a still of its first frame.
  public func canRescue(_ refusal: Refusal) -> Bool {
    switch refusal.reason {
    case .tooLong, .unsupportedCodec, .tooLarge: refusal.isOfVideo
    case .unsupportedFormat:
      refusal.format.flatMap(ForeignFormat.named).map {
        $0.demuxer != nil && ($0.category == .video || $0.category == .image)
      } ?? false
    default: false
    }
  }

  /// Makes the poster in a rescue worker (see `WorkerPool.run(_:as:)`), by the job's
  /// deadline or within ``PosterConfiguration/maximumSeconds`` (plus
  /// ``PosterConfiguration/maximumAnimationSeconds`` for an image sequence), whichever comes
  /// first.
  /// - Throws: the refusal with why no poster was made (no video stream, no frame decodes);
  ///   `too_large`, `too_long` or `too_many_pixels` for a source over the limits it shares
  ///   with the media rescue; `deadline_exceeded`; `cancelled`.
  ///   The poster's own budget running out before the job's deadline is not a stop: the
  ///   refusal stands, with why.
  public func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    // An image sequence's animation has its own time before the still's.
    let animation = job.refusal.isImageSequence ? max(0, configuration.maximumAnimationSeconds) : 0
    let seconds = max(0, configuration.maximumSeconds) + animation
    let budget = ContinuousClock.now + .nanoseconds(Int64(seconds * 1e9))
    return try WorkerPool.pool(for: configuration.source.workers, library: .ffmpeg).run(
      job, as: .poster(configuration), stoppingAt: budget,
      because: "no poster either: no clean frame within the poster's \(configuration.maximumSeconds) s")
  }

  /// The media rescue's: `too_large` or `too_long` for a cached poster whose source is over
  /// this caller's source limits.
  public func sourceRefusal(of provenance: Rescue) -> AttachmentError? {
    MediaRescuer(configuration: configuration.source).sourceRefusal(of: provenance)
  }
}

extension Refusal {
  /// Whether the refused file is an image sequence FFmpeg reads (a ``ForeignFormat`` of category
  /// image with a demuxer: an AVIF or HEIF sequence), which the poster rescuer animates.
  var isImageSequence: Bool {
    format.flatMap(ForeignFormat.named).map { $0.demuxer != nil && $0.category == .image } ?? false
  }
}
