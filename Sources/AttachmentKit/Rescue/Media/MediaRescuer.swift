import Dispatch

/// Turns a near-miss video or audio file into an attachment with FFmpeg's libraries: a clip
/// over the duration limit trimmed by stream copy, H.264 in a foreign container (Matroska,
/// MPEG-TS, AVI) re-wrapped in MP4, PCM AIFF re-wrapped in CAF, video codecs iOS does not play
/// (VP8, VP9, AV1, MPEG-4 part 2) transcoded to H.264, and audio it does not play (FLAC,
/// Vorbis, Opus, ADPCM, DTS, TrueHD) to AAC-LC; audio over its byte limit re-encoded (or
/// trimmed) to fit. See `MediaPlan` for the choice.
///
/// The libraries are opened on the first media rescue (`dlopen`): a hit, an image miss or an
/// accepted video never maps them. Only allowed demuxers and decoders read the source, from a
/// local file only; its declared budgets are checked before decoding; FFmpeg stops at the
/// deadline. At most ``MediaRescueConfiguration/maximumConcurrentRescues`` run at once.
public struct MediaRescuer: Sendable {
  /// The rescue's own limits and encoding settings.
  public var configuration: MediaRescueConfiguration

  /// Makes a media rescuer.
  public init(configuration: MediaRescueConfiguration = MediaRescueConfiguration()) {
    self.configuration = configuration
  }

  /// This rescuer's ``Rescuer/name``, stored with every file it delivers.
  public static let name = "media"
}

extension MediaRescuer: Rescuer {
  /// `"media"`: see ``MediaRescuer/name-swift.type.property``.
  public var name: String { Self.name }

  /// ``MediaRescueConfiguration/maximumSourceBytes``.
  public var maximumSourceBytes: Int64 { configuration.maximumSourceBytes }

  /// A video or audio refusal: too long; a codec iOS does not decode; over the byte limit
  /// (video or audio); not an accepted format, when the bytes are a container FFmpeg reads
  /// (`ForeignFormat` rows naming a demuxer: WebM, Matroska, AVI, MPEG-TS, FLAC, Ogg, AIFF,
  /// 3GPP); and an accepted movie that would play silent (``improvement(for:)``).
  public func canRescue(_ refusal: Refusal) -> Bool {
    switch refusal.reason {
    case .tooLong, .unsupportedCodec, .silentAudio: refusal.category != .image
    case .tooLarge: refusal.category == .video || refusal.category == .audio
    case .unsupportedFormat:
      refusal.format.map(Self.readsRefused) ?? false
    default: false
    }
  }

  /// Whether a file refused as `unsupported_type` with MIME type `format` is one FFmpeg reads:
  /// a foreign container with a demuxer (not an image sequence, the poster's), or an accepted
  /// video or audio type whose structure is not valid (an MPEG-1 stream with a reserved frame
  /// rate code, an MP4 whose boxes do not add up): re-wrapped or transcoded from what FFmpeg
  /// decodes, and validated again.
  static func readsRefused(_ format: String) -> Bool {
    if let foreign = ForeignFormat.named(format) {
      return foreign.demuxer != nil && foreign.category != .image
    }
    return MediaType.allCases.contains { $0.mime == format && $0.demuxer != nil && $0.category != .image }
  }

  /// Starts a rescue worker loading FFmpeg's libraries (``RescueWorkers``), for a refusal the
  /// first bytes already call for (they named a container it reads). Returns `nil`: nothing in
  /// this process waits for it.
  public func prepare(for refusal: Refusal) -> (any RescuePreparation)? {
    WorkerPool.pool(for: configuration.workers, library: .ffmpeg).prestart()
    return nil
  }

  /// Rescues the job's source with FFmpeg in a rescue worker (see the type's documentation,
  /// and `WorkerPool.run(_:as:)` for what the worker adds: `deadline_exceeded` and
  /// `cancelled` at once, a crash or the memory ceiling as the refusal with why it was not
  /// rescued).
  ///
  /// With a ``MediaRescueConfiguration/fallbackReserve``, a video's rescue runs against the
  /// deadline less the reserve, and starts a transcode only when its estimate fits (when the
  /// admission was ``MediaTranscodeAdmission/always``); stopped there, it fails with the refusal
  /// and why, not `deadline_exceeded`, so that the next rescuer (the poster) has the reserve.
  /// Audio has no poster: its rescue keeps the whole deadline and its admission.
  public func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    let pool = WorkerPool.pool(for: configuration.workers, library: .ffmpeg)
    let reserve = configuration.fallbackReserve
    guard reserve > .zero, job.refusal.isOfVideo, let deadline = job.deadline else {
      return try pool.run(job, as: .media(configuration))
    }
    var settings = configuration
    if settings.transcodeAdmission == .always {
      settings.transcodeAdmission = .whenEstimateFits(reserve: .zero)
    }
    return try pool.run(
      job, as: .media(settings), stoppingAt: deadline - reserve,
      because:
        "it could not be made playable before the last \(reserve.inSeconds) s of its deadline, kept for a poster"
    )
  }

  /// The worker's side of ``rescue(_:)``: FFmpeg in this process.
  func transcode(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    if job.bytes > configuration.maximumSourceBytes {
      throw AttachmentError(
        .tooLarge,
        "The source is \(job.bytes) bytes, over the media rescue's source limit of \(configuration.maximumSourceBytes)."
      )
    }
    guard let av = Libav.shared else {
      throw job.refusal.notRescued("FFmpeg's libraries (libavformat59, libavcodec59) are not installed")
    }
    return try RescueGate.media.run(
      limit: configuration.maximumConcurrentRescues, deadline: job.deadline
    ) {
      () throws(AttachmentError) -> Rescue in
      let interrupt = MediaInterrupt(deadline: job.deadline)
      let outcome: MediaEngine.Outcome
      do throws(MediaFailure) {
        outcome = try MediaEngine(av: av, configuration: configuration).run(job, interrupt: interrupt)
      } catch {
        switch error {
        case .unrescued(let reason):
          if interrupt.hasFired { throw MediaInterrupt.deadlineError }
          throw job.refusal.notRescued(reason)
        case .error(let reported): throw reported
        }
      }
      let source = outcome.source
      return Rescue(
        rescuer: Self.name, from: job.refusal.format ?? Self.mime(of: source),
        actions: outcome.plan.actions,
        originalBytes: job.bytes, originalWidth: source.video?.width, originalHeight: source.video?.height,
        originalDurationSeconds: source.durationSeconds, originalCodecs: source.codecs)
    }
  }

  /// A movie whose video iOS decodes but none of whose audio tracks it does (DTS, TrueHD,
  /// AC-4, MPEG-H, …): accepted with a warning, it would play silent. The rescue keeps the
  /// video packet for packet and transcodes the audio to AAC-LC.
  public func improvement(for validation: Validation) -> Refusal? {
    guard validation.type.category == .video, validation.rescued == nil else { return nil }
    let streams = validation.codecs.compactMap { codec in CodecTable.row(for: codec).map { (codec, $0) } }
    let video = streams.filter { $0.1.kind == .video }
    let audio = streams.filter { $0.1.kind == .audio }
    guard video.contains(where: { $0.1.support == .decodes }), !audio.isEmpty,
      !audio.contains(where: { $0.1.support != .doesNotDecode })
    else { return nil }
    let names = audio.map(\.1.name).joined(separator: ", ")
    let silent = AttachmentError(
      .unsupportedCodec,
      "The video plays, but its audio (\(names)) is not decoded by iOS: it would be silent.",
      detected: validation.type.mime)
    return Refusal(silent, reason: .silentAudio, validation: validation)
  }

  /// `too_large` for a source over ``MediaRescueConfiguration/maximumSourceBytes``, `too_long`
  /// for one over ``MediaRescueConfiguration/maximumSourceSeconds``; `nil` otherwise.
  public func sourceRefusal(of provenance: Rescue) -> AttachmentError? {
    if provenance.originalBytes > configuration.maximumSourceBytes {
      return AttachmentError(
        .tooLarge,
        "The source is \(provenance.originalBytes) bytes, over the media rescue's source limit of \(configuration.maximumSourceBytes)."
      )
    }
    if let seconds = provenance.originalDurationSeconds, seconds > configuration.maximumSourceSeconds {
      return AttachmentError(
        .tooLong,
        "The source is \(seconds) s long, over the media rescue's source limit of \(configuration.maximumSourceSeconds) s."
      )
    }
    return nil
  }

  private static func mime(of source: MediaSource) -> String {
    source.video != nil ? MediaType.mp4.mime : MediaType.m4a.mime
  }
}

extension AttachmentError {
  /// This refusal, kept, with why a rescue could not undo it ("… Not rescued: `reason`."),
  /// and `verdict` when how the rescue ended judged the source itself.
  func notRescued(_ reason: String, verdict: SourceVerdict? = nil) -> AttachmentError {
    var error = AttachmentError(
      code, "\(message) Not rescued: \(reason).", httpStatus: httpStatus, detected: detected, kind: kind)
    error.sourceVerdict = verdict
    return error
  }
}
