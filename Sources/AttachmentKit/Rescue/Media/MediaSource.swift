/// What a media source holds, read from its container and stream parameters before anything is
/// decoded: what ``MediaPlan`` decides from and the decode budgets are checked against.
struct MediaSource: Sendable, Equatable {
  /// One stream the rescue may use.
  struct Stream: Sendable, Equatable {
    /// The stream's index in the container.
    var index: Int
    /// FFmpeg's codec name (`h264`, `vp9`, `aac`, `flac`, `pcm_s16be`).
    var codec: String
    /// Whether an allowed decoder reads it (see ``MediaAllowlist``).
    var decodable: Bool
    /// Frame width and height in pixels (video).
    var width = 0
    var height = 0
    /// The average frame rate (video), 0 when unknown.
    var framesPerSecond: Double = 0
    /// Sample rate in hertz and channel count (audio).
    var sampleRate = 0
    var channels = 0
    /// The bitrate the container or stream declares, in bits per second (0 when unknown).
    var bitrate = 0
  }

  /// The demuxer that read it (FFmpeg's name: `matroska,webm`, `mov,mp4,m4a,3gp,3g2,mj2`).
  var demuxer: String
  /// The duration its container declares, in seconds (0 when unknown).
  var durationSeconds: Double
  /// The source's size in bytes.
  var bytes: Int64
  /// The best video stream (cover art is not video), if any.
  var video: Stream?
  /// The best audio stream, if any.
  var audio: Stream?

  /// Whether the source is already in an MP4-family container (a copy keeps its form).
  var isMP4Family: Bool { demuxer.split(separator: ",").contains("mov") }

  /// The codecs of the streams used, by FFmpeg's names (for the record's provenance).
  var codecs: [String] { [video?.codec, audio?.codec].compactMap { $0 } }
}

/// The demuxers and decoders a media rescue may run on untrusted input: those of the formats
/// in ``MediaType`` and ``ForeignFormat`` that name a demuxer, and the decoders of the codecs
/// those formats carry. No protocol but `file` is ever opened.
enum MediaAllowlist {
  /// The demuxers, as `format_whitelist` takes them.
  static let demuxers: String = {
    let names =
      MediaType.allCases.compactMap(\.demuxer) + ForeignFormat.allCases.compactMap(\.demuxer)
    var seen = Set<String>()
    return names.flatMap { $0.split(separator: ",").map(String.init) }.filter { seen.insert($0).inserted }
      .joined(separator: ",")
  }()

  /// The decoders, by FFmpeg's decoder names: ``CodecTable/allowedDecoders``, each under the
  /// budget that table states.
  static var decoders: Set<String> { CodecTable.allowedDecoders }
}
