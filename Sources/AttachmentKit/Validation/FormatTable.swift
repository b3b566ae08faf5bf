/// The container formats the structural probes recognise: the one table to extend with a new
/// format. Each row says how the format is recognised and checked, what it becomes, and what
/// libmagic calls it. (What a ``MediaType`` is to iOS, its UTI, extension and MIME type, is
/// ``MediaType``'s own table.)
///
/// Only the formats AttachmentKit accepts have a case: anything else (WebP, HEIC, AVIF, MPEG
/// transport streams, ...) is "no match" for the probes.
///
/// The cases are declared in the order identification tries them: each probe checks its own
/// magic first, so the order matters only for the frame-synced audio formats, which have none
/// and come last.
enum ProbedFormat: Sendable, Equatable, Hashable, CaseIterable {
  /// JPEG image (SOI, marker segments, a frame header, scans, EOI).
  case jpeg
  /// PNG image (signature, IHDR first, chunks, IEND).
  case png
  /// GIF87a / GIF89a image, static or animated.
  case gif
  /// TIFF image, either byte order (classic TIFF, not BigTIFF).
  case tiff
  /// RIFF WAVE.
  case wav
  /// Core Audio Format ('caff', version 1).
  case caf
  /// AIFF and AIFF-C ("FORM" … "AIFF" / "AIFC").
  case aiff
  /// MPEG-1 / MPEG-2 program stream (00 00 01 BA pack header).
  case mpegProgramStream
  /// MPEG-1 / MPEG-2 video elementary stream (00 00 01 B3 sequence header).
  case mpegVideoStream
  /// MP4 family / QuickTime: ftyp or recognisable top-level boxes.
  case isoBMFF
  /// MPEG audio layer III frames, after an optional ID3v2 tag.
  case mp3
  /// AAC in ADTS frames.
  case adts

  /// One row of the table.
  struct Row: Sendable {
    /// Recognises the format from a stream's first bytes (nil: not this format, or not yet).
    let identify: @Sendable (ByteReader) -> ProbeReport?
    /// Checks the complete file and reads its dimensions, duration and streams.
    let inspect: @Sendable (ByteReader) -> Result<ProbeReport, ProbeProblem>
    /// The media type every file of the format is; nil when the report decides (ISO BMFF
    /// holds MP4, MOV, M4A and refused brands: see ``Classifier``).
    let mediaType: MediaType?
    /// The MIME types libmagic 5.44 gives the format (see the reference notes): while it says
    /// one of these, sniffing waits for more bytes before refusing.
    let magicNames: [String]
  }

  /// The categories a file of this format may be: its media type's, or, for ISO BMFF, video and
  /// audio (an MP4 or MOV, or an M4A: its tracks decide, which its first bytes may not show).
  var categories: [MediaType.Category] {
    if let type = row.mediaType { return [type.category] }
    return self == .isoBMFF ? [.video, .audio] : []
  }

  /// This format's row.
  var row: Row {
    switch self {
    case .jpeg:
      Row(
        identify: JPEGProbe.identify, inspect: JPEGProbe.inspect, mediaType: .jpeg, magicNames: ["image/jpeg"]
      )
    case .png:
      Row(identify: PNGProbe.identify, inspect: PNGProbe.inspect, mediaType: .png, magicNames: ["image/png"])
    case .gif:
      Row(identify: GIFProbe.identify, inspect: GIFProbe.inspect, mediaType: .gif, magicNames: ["image/gif"])
    case .tiff:
      Row(
        identify: TIFFProbe.identify, inspect: TIFFProbe.inspect, mediaType: .tiff, magicNames: ["image/tiff"]
      )
    case .wav:
      Row(
        identify: WAVProbe.identify, inspect: WAVProbe.inspect, mediaType: .wav,
        magicNames: ["audio/x-wav", "audio/wav"])
    case .caf:
      // libmagic names CAF only in its description; its MIME answer is octet-stream.
      Row(identify: CAFProbe.identify, inspect: CAFProbe.inspect, mediaType: .caf, magicNames: [])
    case .aiff:
      Row(
        identify: AIFFProbe.identify, inspect: AIFFProbe.inspect, mediaType: .aiff,
        magicNames: ["audio/x-aiff", "audio/aiff"])
    case .mpegProgramStream:
      Row(
        identify: MPEGProgramStreamProbe.identify, inspect: MPEGProgramStreamProbe.inspect, mediaType: .mpeg,
        magicNames: ["video/mpeg"])
    case .mpegVideoStream:
      Row(
        identify: MPEGVideoStreamProbe.identify, inspect: MPEGVideoStreamProbe.inspect, mediaType: .mpeg,
        magicNames: ["video/mpeg"])
    case .isoBMFF:
      Row(
        identify: ISOBMFFProbe.identify, inspect: ISOBMFFProbe.inspect, mediaType: nil,
        magicNames: ["video/mp4", "video/quicktime", "video/x-m4v", "audio/x-m4a", "audio/mp4"])
    case .mp3:
      Row(identify: MP3Probe.identify, inspect: MP3Probe.inspect, mediaType: .mp3, magicNames: ["audio/mpeg"])
    case .adts:
      Row(
        identify: ADTSProbe.identify, inspect: ADTSProbe.inspect, mediaType: .aac,
        magicNames: ["audio/x-hx-aac-adts", "audio/aac"])
    }
  }
}
