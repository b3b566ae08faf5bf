/// Whether a planned transcode starts when it may not finish before the rescue's deadline (see
/// ``MediaRescueConfiguration/transcodeAdmission``).
public enum MediaTranscodeAdmission: Sendable, Equatable, Codable {
  /// Every planned transcode starts; one still running at the deadline is stopped there
  /// (`deadline_exceeded`, nothing delivered).
  case always
  /// A transcode starts only when its estimate (``MediaTranscodeCost``) is at most the time
  /// left before the job's deadline less `reserve` (for a caller whose useful time ends
  /// earlier, e.g. an extension's time-will-expire); otherwise the original refusal stands,
  /// with "Not rescued: a transcode of N s would take about X s, Y s are left", at once and
  /// without decoding a frame. Trims by stream copy and re-wraps are never refused.
  case whenEstimateFits(reserve: Duration)
}

/// What a transcode costs in wall time, per unit of work: the constants
/// ``MediaTranscodeAdmission/whenEstimateFits(reserve:)`` estimates with. An estimate reads only
/// the source's declared parameters and the plan: the seconds to transcode (the plan's end, or
/// the declared duration, or the duration limit when none is declared), the output frame
/// (after the ``MediaRescueConfiguration/maximumOutputWidth`` × height box), the source frame,
/// and the declared frame rate (30 when unknown).
///
/// Defaults measured on this project's 2-core Debian 12 machine with FFmpeg 5.1's command
/// line, the same libraries and settings (x264 `veryfast`, CRF 23, two threads): encoding 10 s
/// of 1280×720 at 30 fps costs 3.7 s of CPU, decoding it 0.5–0.6 s (VP9, H.264), 0.8 s (AV1
/// through dav1d, the dearest); x264's two threads keep about 1.6 cores busy. A whole 30 s
/// 720p VP9 transcode is estimated at 9.2 s against 7.2–7.8 s measured on a quiet machine.
public struct MediaTranscodeCost: Sendable, Equatable, Codable {
  /// Wall seconds of H.264 encoding per megapixel-second of output at 30 frames per second
  /// (scaled by the declared frame rate). Default: 0.25 (x264 `veryfast`; another preset needs
  /// its own figure: `ultrafast` takes about half the time, 3.3 s against 7.4 s for 30 s of 720p).
  public var encodeSecondsPerMegapixelSecond = 0.25
  /// Wall seconds of decoding per megapixel-second of the source frame at 30 frames per
  /// second. Default: 0.06 (AV1 through dav1d; VP9, H.264 and MPEG-4 part 2 are cheaper).
  public var decodeSecondsPerMegapixelSecond = 0.06
  /// Wall seconds of decoding and AAC-LC encoding per second of audio. Default: 0.02 (60 s of
  /// FLAC to AAC-LC in about 1 s).
  public var audioSecondsPerSecond = 0.02

  /// Makes the measured defaults.
  public init() {}
}

/// The estimate of one plan's transcode, in wall seconds: what admission compares with the time
/// left. `nil` for a plan that transcodes nothing (copies and re-wraps start whatever the time).
struct TranscodeEstimate: Equatable {
  /// The media seconds transcoded.
  var mediaSeconds: Double
  /// The wall seconds it would take.
  var seconds: Double

  init?(plan: MediaPlan, source: MediaSource, limits: ValidationLimits, cost: MediaTranscodeCost) {
    var declared = source.durationSeconds > 0 ? source.durationSeconds : limits.maximumVideoSeconds
    if let end = plan.endSeconds { declared = min(declared, end) }
    mediaSeconds = declared
    seconds = 0
    var transcodes = false
    if case .transcode(let width, let height, _) = plan.video, let video = source.video {
      let frames = video.framesPerSecond > 0 ? video.framesPerSecond / 30 : 1
      let output = Double(width) * Double(height) / 1_000_000
      let input = Double(video.width) * Double(video.height) / 1_000_000
      seconds +=
        declared * frames
        * (output * cost.encodeSecondsPerMegapixelSecond + input * cost.decodeSecondsPerMegapixelSecond)
      transcodes = true
    }
    if case .transcode = plan.audio {
      seconds += declared * cost.audioSecondsPerSecond
      transcodes = true
    }
    guard transcodes else { return nil }
  }

  /// Why a rescue does not start it with `left` seconds before the deadline, for "Not rescued: …".
  func reason(left: Double) -> String {
    "a transcode of \(Self.text(mediaSeconds)) s would take about \(Self.text(seconds)) s, "
      + "\(Self.text(max(0, left))) s are left"
  }

  /// One decimal; whole numbers without it.
  private static func text(_ value: Double) -> String {
    let tenths = (value * 10).rounded() / 10
    return tenths == tenths.rounded() && abs(tenths) < 1e15 ? String(Int64(tenths)) : String(tenths)
  }
}
