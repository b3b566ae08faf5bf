/// The media types AttachmentKit accepts: the one table every other part reads.
///
/// Each type knows its category, the UTI iOS wants as a type hint, the canonical file
/// extension (iOS falls back to the extension when there is no hint), its MIME type, and
/// whether Apple's published attachment table lists it (types outside it are accepted with a
/// warning).
public enum MediaType: String, Sendable, CaseIterable, Codable {
  /// JPEG image.
  case jpeg
  /// PNG image.
  case png
  /// GIF image, static or animated.
  case gif
  /// TIFF image, either byte order.
  case tiff
  /// MPEG-4 video (ISO base media file format).
  case mp4
  /// QuickTime movie.
  case mov
  /// MPEG-1/MPEG-2 program stream or MPEG video stream.
  case mpeg
  /// MPEG audio layer III.
  case mp3
  /// AAC in an ADTS stream.
  case aac
  /// AAC (or other MPEG-4 audio) in an MPEG-4 audio container (`.m4a`).
  case m4a
  /// RIFF WAVE audio.
  case wav
  /// Core Audio Format.
  case caf
  /// AIFF or AIFF-C audio (PCM, μ-law, A-law, IMA4).
  case aiff

  /// The attachment category: image, video or audio.
  public enum Category: String, Sendable, Codable, CaseIterable {
    /// Still or animated images.
    case image
    /// Movies.
    case video
    /// Sound.
    case audio

    /// The default size limit of the category, in bytes (Apple's published figures): image
    /// 10 MB, audio 5 MB, video 50 MB.
    public var defaultMaximumBytes: Int64 {
      switch self {
      case .image: 10_000_000
      case .audio: 5_000_000
      case .video: 50_000_000
      }
    }
  }

  private struct Row {
    let category: Category
    let uti: String
    let fileExtension: String
    let mime: String
    let inApplesTable: Bool
    /// ISO BMFF major brands that mark the type whatever the tracks say.
    var isoBrands: [String] = []
    /// The libvips loader that reads the type (images only).
    var vipsLoader: VipsLoader? = nil
    /// The FFmpeg demuxer that reads the type (video and audio), as `format_whitelist` names it.
    var demuxer: String? = nil
  }

  private var row: Row {
    switch self {
    case .jpeg:
      Row(
        category: .image, uti: "public.jpeg", fileExtension: "jpg", mime: "image/jpeg", inApplesTable: true,
        vipsLoader: VipsLoader(className: "VipsForeignLoadJpegFile"))
    case .png:
      Row(
        category: .image, uti: "public.png", fileExtension: "png", mime: "image/png", inApplesTable: true,
        vipsLoader: VipsLoader(className: "VipsForeignLoadPngFile"))
    case .gif:
      Row(
        category: .image, uti: "com.compuserve.gif", fileExtension: "gif", mime: "image/gif",
        inApplesTable: true,
        vipsLoader: VipsLoader(className: "VipsForeignLoadNsgifFile", readsAnimation: true))
    case .tiff:
      Row(
        category: .image, uti: "public.tiff", fileExtension: "tiff", mime: "image/tiff", inApplesTable: false,
        vipsLoader: VipsLoader(className: "VipsForeignLoadTiffFile"))
    case .mp4:
      Row(
        category: .video, uti: "public.mpeg-4", fileExtension: "mp4", mime: "video/mp4", inApplesTable: true,
        demuxer: "mov")
    case .mov:
      Row(
        category: .video, uti: "com.apple.quicktime-movie", fileExtension: "mov", mime: "video/quicktime",
        inApplesTable: false, demuxer: "mov")
    case .mpeg:
      Row(
        category: .video, uti: "public.mpeg", fileExtension: "mpg", mime: "video/mpeg", inApplesTable: true,
        demuxer: "mpeg,mpegvideo")
    case .mp3:
      Row(
        category: .audio, uti: "public.mp3", fileExtension: "mp3", mime: "audio/mpeg", inApplesTable: true,
        demuxer: "mp3")
    case .aac:
      Row(
        category: .audio, uti: "public.aac-audio", fileExtension: "aac", mime: "audio/aac",
        inApplesTable: false, demuxer: "aac")
    case .m4a:
      Row(
        category: .audio, uti: "public.mpeg-4-audio", fileExtension: "m4a", mime: "audio/mp4",
        inApplesTable: true, isoBrands: ["M4A ", "M4B ", "M4P ", "F4A ", "F4B "], demuxer: "mov")
    case .wav:
      Row(
        category: .audio, uti: "com.microsoft.waveform-audio", fileExtension: "wav", mime: "audio/wav",
        inApplesTable: true, demuxer: "wav")
    case .caf:
      Row(
        category: .audio, uti: "com.apple.coreaudio-format", fileExtension: "caf", mime: "audio/x-caf",
        inApplesTable: false, demuxer: "caf")
    case .aiff:
      Row(
        category: .audio, uti: "public.aiff-audio", fileExtension: "aiff", mime: "audio/aiff",
        inApplesTable: true, demuxer: "aiff")
    }
  }

  /// Image, video or audio.
  public var category: Category { row.category }
  /// The Uniform Type Identifier to pass as `UNNotificationAttachmentOptionsTypeHintKey`.
  public var uti: String { row.uti }
  /// The canonical file extension, without the dot (what iOS needs when no hint is given).
  public var fileExtension: String { row.fileExtension }
  /// The MIME type.
  public var mime: String { row.mime }
  /// Whether Apple's published `UNNotificationAttachment` table lists this type. Types it does
  /// not list (TIFF, MOV, ADTS AAC, CAF) are accepted with a warning.
  public var isInApplesTable: Bool { row.inApplesTable }
  /// ISO BMFF major brands that mark this type whatever the tracks say (audio-only MPEG-4).
  var isoBrands: [String] { row.isoBrands }
  /// The libvips loader that reads this type, for a rescue that downscales it.
  var vipsLoader: VipsLoader? { row.vipsLoader }
  /// The FFmpeg demuxer that reads the type (video and audio), as `format_whitelist` names it.
  var demuxer: String? { row.demuxer }
  /// The product's name for the type family: `aac` covers both ADTS and M4A.
  public var family: String { self == .m4a ? "aac" : rawValue }
}

extension MediaType {
  /// The accepted type a MIME type names, its parameters aside and case aside
  /// (`video/mp4; codecs="vp09"` is ``mp4``); `nil` for a type that is not accepted
  /// (`image/webp`).
  public init?(mime: String) {
    let base = mime.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }.lowercased()
    guard let type = Self.allCases.first(where: { $0.mime.lowercased() == base }) else { return nil }
    self = type
  }
}
