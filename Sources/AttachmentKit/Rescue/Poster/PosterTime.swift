import CAV

/// How a video's poster time is proposed: the time of its first frame that is not nearly black
/// within its first seconds (a black leader, a fade-in), for iOS's
/// `UNNotificationAttachmentOptionsThumbnailTimeKey` (``Validation/posterTimeSeconds``).
///
/// The search decodes the video's frames from the start with FFmpeg's libraries in a rescue
/// worker (the poster rescuer's search, ``PosterRescuer``: the same allowlists, source limits
/// and kernel bounds, frames measured at a small size), within a small budget of its own and
/// never past the request's deadline. It is a proposal, never a refusal: on a timeout, a failure,
/// or a video dark all through its first seconds, nothing is proposed (iOS then takes the first
/// frame).
public struct PosterTimeConfiguration: Sendable, Equatable, Codable {
  /// How far into the video the search looks, in seconds of the video. Default: 5.
  public var searchSeconds: Double = 5

  /// The most wall time the search takes, in seconds, worker start included; never past the
  /// request's deadline. Default: 1.5.
  public var maximumSeconds: Double = 1.5

  /// How long before the request's deadline the search must be over, in seconds: a caller with
  /// an earlier end of its own (the extension runner's time-will-expire, its expire margin
  /// before the fetch's deadline) keeps that time for delivering. Default: 0.
  public var deadlineReserveSeconds: Double = 0

  /// The frame search's settings: ``PosterConfiguration/darkLuma`` (40) says what is nearly
  /// black, ``PosterConfiguration/maximumDecodedFrames`` bounds the frames decoded (here 300:
  /// 5 s at 60 fps), ``PosterConfiguration/maximumEdge`` the size a frame is measured at (here
  /// 160 pixels: only its mean luma is read), and ``PosterConfiguration/source`` the source
  /// limits and the worker processes (``MediaRescueConfiguration/workers``).
  public var search: PosterConfiguration

  /// The defaults above.
  public init() {
    search = PosterConfiguration()
    search.maximumEdge = 160
    search.maximumDecodedFrames = 300
  }

  /// Proposes the poster time of the accepted video at `path` (`validation` is what the
  /// validator found it to be), in a rescue worker, by `deadline` less
  /// ``deadlineReserveSeconds`` or within ``maximumSeconds``, whichever comes first;
  /// `isCancelled` stops it at once.
  /// - Returns: the time in seconds (0 when the first frame is bright), or `nil` when nothing
  ///   is proposed: not a video, no frame bright enough within ``searchSeconds``, the budget
  ///   spent, the deadline near, any failure of the worker or the decoder.
  func propose(
    path: String, validation: Validation, deadline: ContinuousClock.Instant?,
    isCancelled: @escaping @Sendable () -> Bool = { false }
  ) -> Double? {
    guard validation.category == .video, maximumSeconds > 0, searchSeconds >= 0 else { return nil }
    // Seconds as durations, bounded to a day (a configuration's infinity never traps).
    func duration(_ seconds: Double) -> Duration { .nanoseconds(Int64(max(0, min(seconds, 86_400)) * 1e9)) }
    let budget = ContinuousClock.now + duration(maximumSeconds)
    let reserve = duration(deadlineReserveSeconds)
    let end = deadline.map { min($0 - reserve, budget) } ?? budget
    guard ContinuousClock.now.duration(to: end) > .milliseconds(50) else { return nil }
    let job = RescueJob(
      source: path, bytes: validation.bytes,
      refusal: Refusal(
        AttachmentError(.ioError, "No refusal: a poster time is proposed for an accepted video."),
        validation: validation),
      output: "/dev/null", limits: ValidationLimits(), deadline: end, isCancelled: isCancelled)
    let pool = WorkerPool.pool(for: search.source.workers, library: .ffmpeg)
    guard let reply = try? pool.exchange(job, as: .posterTime(self)),
      let seconds = reply.posterTime, seconds.isFinite, seconds >= 0
    else { return nil }
    return seconds
  }
}

extension PosterMaker {
  /// The worker's side of ``PosterTimeConfiguration/propose(path:validation:deadline:isCancelled:)``:
  /// the time of `job.source`'s first frame (of its video stream) whose mean luma is at least
  /// ``PosterConfiguration/darkLuma``, looking no further than `window` seconds into it.
  /// - Returns: the seconds from the stream's start, or `nil` when no frame within the window
  ///   (and the frame budget) is bright enough, or the bright frame has no time stamp.
  /// - Throws: `too_large`, `too_long`, `too_many_pixels` for a source over the source limits;
  ///   the job's refusal with why it could not be read; `deadline_exceeded`.
  func firstBrightSeconds(_ job: RescueJob, window: Double) throws(AttachmentError) -> Double? {
    let limits = configuration.source
    let av = try libraries(for: job)
    let interrupt = MediaInterrupt(deadline: job.deadline)
    do throws(MediaFailure) {
      let input = try MediaInput(
        path: job.source, av: av, interrupt: interrupt, maximumTracks: limits.maximumSourceTracks,
        maximumFramePixels: limits.maximumSourceFramePixels)
      guard let video = input.source(bytes: job.bytes).video, let stream = input.stream(video.index) else {
        return nil
      }
      let pick = try pick(
        from: input, stream: stream, index: video.index, av: av, interrupt: interrupt, searchEnd: nil,
        window: window)
      return pick.isBright ? pick.seconds : nil
    } catch {
      switch error {
      case .unrescued(let reason):
        if interrupt.hasFired { throw MediaInterrupt.deadlineError }
        throw job.refusal.notRescued("no poster time: \(reason)")
      case .error(let reported): throw reported
      }
    }
  }
}
