/// The decode check: "accepted" means a decoder starts it. Once an audio or video file has
/// passed every structural check, FFmpeg opens its container, as a player does, and decodes the
/// first ``seconds`` of each stream it plays (the best video stream and, when FFmpeg decodes it,
/// the best audio stream; an audio file's best audio stream), in a rescue worker: a file the
/// demuxer does not read, a stream no decoder opens, or one of whose first packets more than two
/// in three do not decode (FFmpeg's own `-max_error_rate`), is refused with `undecodable`.
///
/// Damage inside entropy-coded data (AAC, ALAC, MP3, H.264, HEVC, AV1) is out of a structural
/// probe's reach; a decoder finds it. Untrusted bytes are decoded only in a sandboxed worker
/// (``RescueWorkerConfiguration``), never in the calling process; a cache hit never checks (it
/// was checked when it was stored). Linear PCM, A-law and μ-law hold no coded data the probes
/// did not read, and images are judged by their probes: neither starts a worker.
///
/// Where no worker can run (no worker executable, as in an extension process without one; a
/// worker that cannot start or confine itself; FFmpeg's libraries not installed in it), the file
/// is accepted on its structure alone, with a warning that says it was not decoded.
public struct DecodeCheckConfiguration: Sendable, Hashable, Codable {
  /// The seconds of each stream decoded, from its first packet. Default 1.
  public var seconds: Double = 1

  /// The largest video frame the check decodes, in pixels (FFmpeg's `max_pixels`); a larger one
  /// is refused with `too_many_pixels`. Default 8192 × 4352 (HEVC's level 6.2: no iOS device
  /// decodes more).
  public var maximumFramePixels: Int64 = 8192 * 4352

  /// The worker processes the check runs in: FFmpeg's pool for this configuration, shared with
  /// the media rescues of an equal one (its warm spare serves both).
  public var workers = RescueWorkerConfiguration()

  /// The defaults above.
  public init() {}

  /// Whether an accepted file is checked: audio or video with a stream whose codec is not one
  /// the probes judge whole (linear PCM, A-law, μ-law).
  static func applies(to validation: Validation) -> Bool {
    guard validation.category == .audio || validation.category == .video else { return false }
    return validation.codecs.contains { !CodecTable.structurallyDecoded.contains($0) }
  }

  /// Checks the accepted file at `path` (`validation` is what the probes found it to be) in a
  /// rescue worker, blocking the calling thread (a check thread: never one of Swift's
  /// cooperative pool) until the worker answers, `deadline` passes or `isCancelled` says so.
  /// - Returns: `nil` when every stream it plays starts; a warning when the check could not
  ///   run (the file is then accepted on its structure alone).
  /// - Throws: `undecodable` (with why; also when the decoder crashed or exhausted its worker),
  ///   `too_many_pixels`, `deadline_exceeded`, `cancelled`, `io_error` (the file cannot be
  ///   opened).
  func check(
    path: String, validation: Validation, deadline: ContinuousClock.Instant?,
    isCancelled: @escaping @Sendable () -> Bool
  ) throws(AttachmentError) -> String? {
    guard RescueWorkers.executable(for: workers) != nil else {
      return Self.unchecked(RescueWorkers.missingExecutable)
    }
    let refusal = Refusal(
      AttachmentError(.undecodable, "No decoder starts it.", detected: validation.mime),
      validation: validation)
    let job = RescueJob(
      source: path, bytes: validation.bytes, refusal: refusal, output: "/dev/null",
      limits: ValidationLimits(),
      deadline: deadline, isCancelled: isCancelled)
    let outcome: WorkerProcess.Outcome
    do {
      outcome = try WorkerPool.pool(for: workers, library: .ffmpeg).attempt(job, as: .decodeCheck(self))
    } catch {
      // The job's own refusal comes back when no worker could start: not a verdict on the file.
      guard error.code == .undecodable else { throw error }
      return Self.unchecked("its rescue worker cannot start")
    }
    switch outcome {
    case .replied(let reply):
      if let error = reply.error { throw error.error }
      return reply.unchecked.map(Self.unchecked)
    case .stopped(.cancelled):
      throw AttachmentError.cancelledError()
    case .stopped:
      throw AttachmentError(
        .deadlineExceeded,
        "The deadline passed while the file's first second was decoded; its worker was stopped.")
    case .died(let death):
      let ending = death.ending(ceiling: workers.memoryCeilingBytes)
      if ending.reason.hasPrefix("its worker cannot confine itself") { return Self.unchecked(ending.reason) }
      var error = AttachmentError(
        .undecodable, "No decoder starts it: \(ending.reason).", detected: validation.mime)
      error.sourceVerdict = ending.verdict
      throw error
    }
  }

  /// The warning of a file accepted without its decode check.
  static func unchecked(_ reason: String) -> String {
    "Not opened by a decoder (\(reason)): accepted on its structure alone."
  }
}
