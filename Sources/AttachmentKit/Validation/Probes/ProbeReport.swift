/// What the structure of the bytes shows: the format and whatever the headers say about the
/// media (dimensions, duration, tracks).
///
/// `identify` fills in what the first bytes show; `inspect` fills in what the whole file shows.
/// Fields a format does not have stay nil / false / empty.
struct ProbeReport: Sendable, Equatable {
  /// The format the structure proves.
  var format: ProbedFormat
  /// Pixel width: image dimensions, or the first video track / sequence header.
  var width: Int?
  /// Pixel height, as `width`.
  var height: Int?
  /// GIF: image descriptors; TIFF: IFDs (pages); APNG: frames from `acTL`. Nil elsewhere.
  var frames: Int?
  /// Media duration in seconds when the container says it (or it can be computed cheaply).
  var durationSeconds: Double?
  /// ISO BMFF: the ftyp major brand (nil without ftyp).
  var majorBrand: String?
  /// ISO BMFF: the ftyp compatible brands (zero brands left out).
  var compatibleBrands: [String]
  /// ISO BMFF: a track whose handler is 'vide'; MPEG: video packets / a video stream.
  var hasVideoTrack: Bool
  /// ISO BMFF: a track whose handler is 'soun'; MPEG-PS: audio packets; true for audio formats.
  var hasAudioTrack: Bool
  /// ISO BMFF: ftyp major brand 'qt  ', or QuickTime atoms without ftyp.
  var isQuickTime: Bool
  /// ISO BMFF: an mvex box in moov, or moof boxes.
  var isFragmented: Bool
  /// Audio sample rate in Hz when the stream header says it.
  var sampleRate: Int?
  /// Audio channel count when the stream header says it.
  var channels: Int?
  /// Codec names: ISO BMFF sample entry types ('avc1', 'mp4a'), CAF format ID, WAV format tag,
  /// JPEG frame type ('SOF0'), TIFF compression; MPEG-1 vs MPEG-2.
  var codecs: [String]
  /// Audio and video formats: every stream (track, PES stream id, the one stream of an
  /// elementary file) with its codec, for the decodability table (``CodecTable``).
  var streams: [MediaStream]
  /// Findings that do not fail the file, for a warning: trailing bytes, resynchronisation, ...
  var notes: [String]

  /// A report of `format` with nothing else known yet.
  init(format: ProbedFormat) {
    self.format = format
    self.width = nil
    self.height = nil
    self.frames = nil
    self.durationSeconds = nil
    self.majorBrand = nil
    self.compatibleBrands = []
    self.hasVideoTrack = false
    self.hasAudioTrack = false
    self.isQuickTime = false
    self.isFragmented = false
    self.sampleRate = nil
    self.channels = nil
    self.codecs = []
    self.streams = []
    self.notes = []
  }
}

/// One elementary stream of a media file: what kind it is and its codec.
struct MediaStream: Sendable, Equatable, Hashable {
  /// What the stream carries.
  enum Kind: Sendable, Equatable, Hashable {
    /// Pictures (ISO handler 'vide', MPEG video stream ids).
    case video
    /// Sound (ISO handler 'soun', MPEG audio stream ids, audio files).
    case audio
    /// Anything else: timed text, timecode, metadata, hint tracks.
    case other
  }

  /// What the stream carries.
  var kind: Kind
  /// The codec as an RFC 6381 `codecs` string (`avc1.64001F`, `mp4a.40.2`, `hvc1.1.6.L93.B0`,
  /// `ac-3`, `opus`, `mp3`); WAV format tags in RFC 2361's decimal form (`1` for PCM); a sample
  /// entry or format ID without a registered form as its four-character code, trailing spaces
  /// removed.
  var codec: String
  /// False for an ISO BMFF audio sample entry that gives neither channels nor a sample rate
  /// (all zeros): whatever its codec, nothing can decode it.
  var isDescribed = true
}

/// Why a walk stopped before it could finish, whatever the bytes say.
enum ProbeStop: Sendable, Equatable {
  /// The walk read more than its work budget allows for the file's size.
  case workBudget
  /// The caller's deadline passed.
  case deadline
  /// The calling task was cancelled.
  case cancelled
}

/// Why a complete file fails its structural check.
enum ProbeProblem: Sendable, Equatable, Error {
  /// The structure runs past the end of the file: the download (or the file) was cut short.
  case truncated(String)
  /// The structure is wrong in a way more bytes would not fix.
  case malformed(String)
  /// The structure is sound but holds nothing to play (an MP3 whose only frame is its Xing /
  /// LAME info frame, a WAV whose data chunk is 0 bytes): not a short file, an empty one.
  case noMedia(String)
  /// The walk was stopped (work budget, deadline, cancellation) before it reached a verdict.
  case interrupted(ProbeStop)
}
