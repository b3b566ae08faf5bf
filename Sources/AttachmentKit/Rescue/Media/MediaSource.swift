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

  /// The decoders, by FFmpeg's decoder names (flat table). Every one runs in a rescue worker
  /// under the same budget, read before a frame is decoded: the declared duration, frame size
  /// and frame count, then `max_pixels` at every keyframe (see ``MediaInput``).
  static let decoders: Set<String> = [
    // Video: the modern codecs, then what phones, cameras and old sites sent (3GPP's H.263,
    // Flash's Sorenson H.263, Windows Media, AVI's Microsoft MPEG-4 and Motion JPEG).
    "h264", "hevc", "vp8", "vp9", "libdav1d", "av1", "mpeg4", "mpeg1video", "mpeg2video",
    "h263", "h263i", "h263p", "flv", "msmpeg4v1", "msmpeg4v2", "msmpeg4", "wmv1", "wmv2", "wmv3", "vc1",
    "mjpeg",
    // Audio.
    "aac", "aac_fixed", "mp3float", "mp3", "mp2float", "mp2", "mp1float", "mp1", "flac", "vorbis", "opus",
    "libopus", "alac", "ac3", "eac3", "dca", "truehd", "mlp", "pcm_s16le", "pcm_s16be", "pcm_s24le",
    "pcm_s24be", "pcm_s32le", "pcm_s32be", "pcm_f32le", "pcm_f32be", "pcm_f64le", "pcm_f64be", "pcm_u8",
    "pcm_s8", "pcm_alaw", "pcm_mulaw", "adpcm_ms", "adpcm_ima_wav", "adpcm_ima_qt", "amrnb", "amrwb", "speex",
    "wmav1", "wmav2", "wmapro", "adpcm_swf", "nellymoser",
  ]
}
