/// How near-miss video and audio are turned into attachments (see ``MediaRescuer``): clips over
/// the duration limit trimmed, foreign containers re-wrapped, codecs iOS does not play
/// transcoded to H.264 and AAC-LC, with FFmpeg's libraries.
///
/// Every limit here applies to rescued sources only; the delivered file still meets
/// ``ValidationLimits`` and is checked by the validator before it is published.
public struct MediaRescueConfiguration: Sendable, Equatable, Codable {
  /// The largest source a media rescue downloads, in bytes. Default: 200 MB (a 20 s video of
  /// 80 MB is re-encoded to fit the 50 MB video limit).
  public var maximumSourceBytes: Int64 = 200_000_000

  /// The longest source, in seconds, as its container declares; a longer one is refused with
  /// `too_long` before anything is decoded. Default: 600.
  public var maximumSourceSeconds: Double = 600

  /// The largest decoded video frame of a source, in pixels (width × height), read from the
  /// stream parameters before decoding; larger is `too_many_pixels`. Default: 4096 × 4096.
  public var maximumSourceFramePixels: Int64 = 4096 * 4096

  /// The most video frames a source may declare (frame rate × duration). Default: 36,000 (600 s
  /// at 60 frames per second).
  public var maximumSourceFrames: Int64 = 36_000

  /// The most tracks (streams) a source may have. FFmpeg's stream probing decodes a frame of
  /// every track before any budget is read, so a file of many large tracks is refused before
  /// its streams are probed: 40 VP9 tracks of 4096×4096 in 240 KB took 691 MB. Default: 8.
  public var maximumSourceTracks: Int = 8

  /// The largest side of a transcoded video's frame, in pixels: wider or taller sources are
  /// scaled down into `maximumOutputWidth` × `maximumOutputHeight` (orientation kept).
  /// Default: 1280 × 720, what a notification shows at most.
  public var maximumOutputWidth: Int = 1280
  /// See ``maximumOutputWidth``. Default: 720.
  public var maximumOutputHeight: Int = 720

  /// The x264 preset of transcoded video (`ultrafast` … `veryslow`): slower presets make
  /// smaller files at more CPU. Default: `veryfast` (about 7 s for 30 s of 720p on two cores).
  public var videoPreset: String = "veryfast"

  /// x264's constant rate factor (0–51, lower is better quality) when no byte target applies.
  /// Default: 23.
  public var videoQuality: Int = 23

  /// The AAC-LC bitrate of transcoded audio, in bits per second. Default: 128,000.
  public var audioBitrate: Int = 128_000

  /// Threads per video decoder and encoder; 0 lets FFmpeg choose from the number of cores
  /// (what the `ffmpeg` command does). Default: 0.
  public var threads: Int = 0

  /// Media rescues running at once in this process; a rescue waits for a slot until its
  /// deadline. Image rescues, hits and other misses never wait for these. Default: 2.
  public var maximumConcurrentRescues: Int = 2

  /// Whether a planned transcode (or re-encode to fit) starts when its estimated time may not
  /// fit before the job's deadline: ``MediaTranscodeAdmission/always`` starts it and stops it
  /// at the deadline; ``MediaTranscodeAdmission/whenEstimateFits(reserve:)`` keeps the original
  /// refusal at once instead ("Not rescued: a transcode of N s would take about X s, Y s are
  /// left"), estimated with ``transcodeCost``. Trims by copy and re-wraps start either way.
  /// Default: `.always` (the extension runner uses `.whenEstimateFits`, with its expire margin
  /// as the reserve).
  public var transcodeAdmission: MediaTranscodeAdmission = .always

  /// Time kept at the end of a video's deadline for the rescuer tried after this one (a
  /// ``PosterRescuer``): the media rescue plans, admits and runs against the deadline less this
  /// (a transcode starting only when its estimate fits, if ``transcodeAdmission`` is
  /// `.always`), and when it is stopped there it fails as "not rescued" rather than
  /// `deadline_exceeded`, so that the next rescuer still runs. Audio keeps the whole deadline.
  /// Default: zero (``StandardRescuers`` sets it to the poster's
  /// ``PosterConfiguration/maximumSeconds`` when a poster follows).
  public var fallbackReserve: Duration = .zero

  /// The cost constants of a transcode's estimate (see ``MediaTranscodeCost``). Default: those
  /// measured for x264 `veryfast` on two cores.
  public var transcodeCost = MediaTranscodeCost()
  /// The worker processes the rescue runs in, and their kernel limits (see
  /// ``RescueWorkerConfiguration`` for the defaults).
  public var workers = RescueWorkerConfiguration()

  /// Makes the default media rescue settings.
  public init() {}
}
