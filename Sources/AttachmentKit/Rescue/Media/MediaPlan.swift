/// What a media rescue does to one source, decided from its facts alone (a value, tested
/// without FFmpeg): the cheapest form that yields a file iOS plays. Stream copy where the codec
/// plays, re-wrapping where only the container is foreign, transcoding otherwise; trimmed to
/// the duration limit; audio re-encoded at a bitrate (or for a duration) that fits its byte
/// limit.
struct MediaPlan: Sendable, Equatable {
  /// The container written.
  enum Output: String, Sendable, Equatable {
    /// MPEG-4 with `moov` first (FFmpeg's `mp4` muxer).
    case mp4
    /// MPEG-4 audio (FFmpeg's `ipod` muxer: brand `M4A `).
    case m4a
    /// Core Audio Format, for PCM samples re-wrapped as they are.
    case caf
    /// An animated GIF (an image sequence's, ``SequenceAnimation``).
    case gif

    /// FFmpeg's muxer name.
    var muxer: String { self == .m4a ? "ipod" : rawValue }
  }

  /// What happens to the video stream.
  enum Video: Sendable, Equatable {
    /// Packets copied as they are.
    case copy
    /// Decoded and encoded as H.264 (High, yuv420p) at this size, at `bitrate` bits per second
    /// (`nil`: constant quality).
    case transcode(width: Int, height: Int, bitrate: Int?)
  }

  /// What happens to the audio stream.
  enum Audio: Sendable, Equatable {
    /// Packets copied as they are.
    case copy
    /// Decoded and encoded as AAC-LC at `bitrate` bits per second.
    case transcode(bitrate: Int)
  }

  var output: Output
  var video: Video?
  var audio: Audio?
  /// The presentation is cut at this many seconds (`nil`: kept whole). A copied video is cut
  /// at the last keyframe at or before it, so the result is never longer.
  var endSeconds: Double?
  /// What the rescue reports it did.
  var actions: [Rescue.Action]

  /// The plan for `source`, refused with `refusal`, to meet `limits`; or why no rescue helps.
  static func make(
    for source: MediaSource, refusal: Refusal, limits: ValidationLimits,
    configuration: MediaRescueConfiguration
  ) -> Result<MediaPlan, MediaFailure> {
    if let video = source.video {
      return videoPlan(source, video: video, refusal: refusal, limits: limits, configuration: configuration)
    }
    guard let audio = source.audio else {
      return .failure(.unrescued("it has neither a video nor an audio stream"))
    }
    return audioPlan(source, audio: audio, limits: limits, configuration: configuration)
  }

  /// Codecs an MP4 or M4A carries to iOS as they are, by FFmpeg's names: H.264 and HEVC
  /// video; AAC, AC-3, E-AC-3 and MP3 audio (``CodecTable/copiedCodecs``).
  private static var copied: Set<String> { CodecTable.copiedCodecs }
  /// Copied video up to 1080p plays everywhere iOS runs.
  private static let largestCopiedPixels = 1920 * 1088

  private static func videoPlan(
    _ source: MediaSource, video: MediaSource.Stream, refusal: Refusal, limits: ValidationLimits,
    configuration: MediaRescueConfiguration
  ) -> Result<MediaPlan, MediaFailure> {
    guard video.decodable || copied.contains(video.codec) else {
      return .failure(.unrescued("no allowed decoder reads its \(video.codec) video"))
    }
    let limit = limits.maximumVideoSeconds
    let end = source.durationSeconds > limit ? limit : nil
    let overBytes = refusal.reason == .tooLarge || source.bytes > limits.maximumVideoBytes
    let copies =
      copied.contains(video.codec) && video.width * video.height <= largestCopiedPixels && !overBytes
    var audioStep: Audio?
    var audioBitrate = 0
    if let audio = source.audio {
      if copied.contains(audio.codec) {
        audioStep = .copy
        audioBitrate = audio.bitrate > 0 ? audio.bitrate : configuration.audioBitrate
      } else if audio.decodable {
        audioStep = .transcode(bitrate: configuration.audioBitrate)
        audioBitrate = configuration.audioBitrate
      }
    }
    var actions: [Rescue.Action] = []
    let videoStep: Video
    if copies {
      videoStep = .copy
      if !source.isMP4Family { actions.append(.rewrapped) }
    } else {
      let (width, height) = fit(video, configuration: configuration)
      // Shrinking: the video gets what the limit leaves after the audio.
      let total = bitrate(for: limits.maximumVideoBytes, seconds: end ?? source.durationSeconds)
      videoStep = .transcode(
        width: width, height: height,
        bitrate: overBytes ? max(minimumVideoBitrate, total - audioBitrate) : nil)
      actions.append(overBytes && copied.contains(video.codec) ? .shrunk : .transcoded)
    }
    if end != nil { actions.insert(.trimmed, at: 0) }
    if case .transcode = audioStep, !actions.contains(.transcoded) { actions.append(.transcoded) }
    return .success(
      MediaPlan(output: .mp4, video: videoStep, audio: audioStep, endSeconds: end, actions: actions))
  }

  private static func audioPlan(
    _ source: MediaSource, audio: MediaSource.Stream, limits: ValidationLimits,
    configuration: MediaRescueConfiguration
  ) -> Result<MediaPlan, MediaFailure> {
    guard audio.decodable else {
      return .failure(.unrescued("no allowed decoder reads its \(audio.codec) audio"))
    }
    let fits = source.bytes <= limits.maximumAudioBytes
    // PCM in a foreign container (AIFF) keeps its samples: CAF carries either byte order.
    if audio.codec.hasPrefix("pcm_"), fits {
      return .success(
        MediaPlan(output: .caf, video: nil, audio: .copy, endSeconds: nil, actions: [.rewrapped]))
    }
    if copied.contains(audio.codec), fits {
      return .success(
        MediaPlan(output: .m4a, video: nil, audio: .copy, endSeconds: nil, actions: [.rewrapped]))
    }
    // AAC-LC at the configured bitrate, lower (down to 48 kb/s) to fit, then trimmed to fit.
    let seconds = max(source.durationSeconds, 0.001)
    let budget = bitrate(for: limits.maximumAudioBytes, seconds: seconds)
    let rate = min(configuration.audioBitrate, max(budget, minimumAudioBitrate))
    var actions: [Rescue.Action] = [.transcoded]
    var end: Double?
    if budget < minimumAudioBitrate {
      end = Double(limits.maximumAudioBytes) * 8 * payloadShare / Double(rate)
      actions.append(.trimmed)
    }
    return .success(
      MediaPlan(output: .m4a, video: nil, audio: .transcode(bitrate: rate), endSeconds: end, actions: actions)
    )
  }

  /// The lowest video bitrate a shrink encodes at, in bits per second.
  static let minimumVideoBitrate = 100_000

  /// The lowest AAC-LC bitrate a rescue encodes at, in bits per second.
  static let minimumAudioBitrate = 48_000
  /// The share of a byte limit left to the media payload (the rest is container overhead).
  private static let payloadShare = 0.92

  /// The bitrate that fills `bytes` in `seconds`, leaving room for the container.
  private static func bitrate(for bytes: Int64, seconds: Double) -> Int {
    guard seconds > 0 else { return Int.max }
    return Int(min(Double(Int.max / 2), Double(bytes) * 8 * payloadShare / seconds))
  }

  /// The frame size of a transcode: the source's, scaled down (aspect kept, even sides) to fit
  /// the configured box, the box turned to match a portrait source.
  static func fit(_ video: MediaSource.Stream, configuration: MediaRescueConfiguration) -> (Int, Int) {
    let portrait = video.height > video.width
    let boxWidth = portrait ? configuration.maximumOutputHeight : configuration.maximumOutputWidth
    let boxHeight = portrait ? configuration.maximumOutputWidth : configuration.maximumOutputHeight
    let width = max(video.width, 2)
    let height = max(video.height, 2)
    let scale = min(1, Double(boxWidth) / Double(width), Double(boxHeight) / Double(height))
    let even = { (side: Double) in max(2, Int(side) & ~1) }
    return (even(Double(width) * scale), even(Double(height) * scale))
  }
}

extension Rescue.Action {
  /// Cut to the duration (or byte) limit.
  public static let trimmed = Self(rawValue: "trimmed")
  /// The same streams moved into a container iOS reads.
  public static let rewrapped = Self(rawValue: "rewrapped")
  /// A stream decoded and encoded again in a codec iOS plays.
  public static let transcoded = Self(rawValue: "transcoded")
  /// Re-encoded at a lower bitrate to fit the byte limit.
  public static let shrunk = Self(rawValue: "shrunk")
}
