/// Formats AttachmentKit recognises but does not accept: the one table of what such a file is
/// called in a refusal, which ISO BMFF brands mark it, and which libvips loader or FFmpeg
/// demuxer (if any) lets a rescue read it. (What an accepted type is, is ``MediaType``'s table; how a format is
/// recognised and checked, ``ProbedFormat``'s.)
///
/// Add a row here to name a new refused ISO brand, or to let the image or media rescuer read
/// a new source format.
enum ForeignFormat: CaseIterable, Sendable {
  /// HEIF's own brand (`mif1`), read by libvips' HEIF loader. Declared before HEIC and AVIF,
  /// which the same loader reads: the loader's name for what it reads is this row's MIME type.
  case heif
  /// HEIC still images.
  case heic
  /// AVIF still images (AV1 in HEIF).
  case avif
  /// WebP, still or animated.
  case webp
  /// Image sequences in HEIF (`msf1`).
  case heifSequence
  /// Image sequences in HEIC (`hevc`, `hevx`).
  case heicSequence
  /// 3GPP movies.
  case threeGPP
  /// 3GPP2 movies.
  case threeGPP2
  /// Canon raw images (CR3).
  case canonRaw
  /// JPEG 2000 (`jp2 `).
  case jpeg2000
  /// JPEG 2000 part 2 (`jpx `).
  case jpx
  /// A bare JPEG 2000 codestream (`.j2k`, `.j2c`: `FF 4F FF 51`), as cameras and DICOM tools
  /// write it without the JP2 boxes.
  case jpeg2000Codestream
  /// JPEG XL (a bare codestream, `FF 0A`, or its ISO container).
  case jpegXL
  /// Windows bitmap (`BM`): libvips 8.14 reads it only through ImageMagick, which a worker does
  /// not load; FFmpeg's BMP decoder reads it, and the poster rescuer converts its one frame.
  case bmp
  /// WebM (Matroska with VP8/VP9/AV1 and Vorbis/Opus).
  case webm
  /// Matroska.
  case matroska
  /// AVI (RIFF).
  case avi
  /// MPEG transport stream.
  case mpegTransportStream
  /// Flash video (Sorenson H.263, H.264; MP3, AAC, ADPCM, Nellymoser).
  case flashVideo
  /// Windows Media: ASF with WMV and WMA.
  case advancedSystemsFormat
  /// Raw AMR-NB and AMR-WB speech (`#!AMR`).
  case amr
  /// Raw AC-3 and E-AC-3 (Dolby Digital, as broadcasts and discs carry it).
  case dolbyDigital
  /// FLAC.
  case flac
  /// Ogg (Vorbis, Opus, FLAC).
  case ogg

  private struct Row {
    let mime: String
    var isoBrands: [String] = []
    var vipsLoader: VipsLoader? = nil
    /// The category a media rescue delivers it as, for the video and audio formats; `.image`
    /// for an image sequence FFmpeg reads (its poster is delivered).
    var category: MediaType.Category? = nil
    /// The FFmpeg demuxer that reads it (its short name, as `format_whitelist` takes it).
    var demuxer: String? = nil
  }

  private var row: Row {
    let heifLoader = VipsLoader(className: "VipsForeignLoadHeifFile", module: "heif")
    switch self {
    case .heif: return Row(mime: "image/heif", isoBrands: ["mif1"], vipsLoader: heifLoader)
    case .heic:
      return Row(mime: "image/heic", isoBrands: ["heic", "heix", "heim", "heis"], vipsLoader: heifLoader)
    case .avif:
      // A still is libheif's (libvips' loader); a sequence (`avis`), which libheif 1.15 does not
      // read, is an AV1 track FFmpeg's mov demuxer reads: its first frame is the poster.
      return Row(
        mime: "image/avif", isoBrands: ["avif", "avis", "avio"], vipsLoader: heifLoader, category: .image,
        demuxer: "mov")
    case .webp:
      return Row(
        mime: "image/webp", isoBrands: [],
        vipsLoader: VipsLoader(className: "VipsForeignLoadWebpFile", readsAnimation: true))
    case .heifSequence:
      return Row(
        mime: "image/heif-sequence", isoBrands: ["msf1"], vipsLoader: nil, category: .image, demuxer: "mov")
    case .heicSequence:
      return Row(
        mime: "image/heic-sequence", isoBrands: ["hevc", "hevx"], vipsLoader: nil, category: .image,
        demuxer: "mov")
    case .threeGPP:
      return Row(
        mime: "video/3gpp", isoBrands: ["3gp4", "3gp5", "3gp6", "3gp7", "3gs7"], category: .video,
        demuxer: "mov")
    case .threeGPP2:
      // 3GPP2 C.S0050 brands, and KDDI's 'kddi' (MP4RA: "3GPP2 EZmovie for KDDI 3G
      // cellphones"), which is the same format: refused like every 3GPP and 3GPP2 brand
      // (Apple's attachment table lists neither, and no UTI of the accepted set names them),
      // and converted by the media rescue, whose mov demuxer reads them.
      return Row(
        mime: "video/3gpp2", isoBrands: ["3g2a", "3g2b", "3g2c", "kddi"], category: .video, demuxer: "mov")
    case .canonRaw: return Row(mime: "image/x-canon-cr3", isoBrands: ["crx "], vipsLoader: nil)
    case .jpeg2000:
      // OpenJPEG, which libvips marks untrusted: only a rescue worker opens it (see
      // ``VipsLoader/isUntrusted``).
      return Row(
        mime: "image/jp2", isoBrands: ["jp2 "],
        vipsLoader: VipsLoader(className: "VipsForeignLoadJp2kFile", isUntrusted: true, shrinksOnLoad: false))
    case .jpx:
      // OpenJPEG reads a JPX's codestream (its part 2 extensions it does not decode refuse it).
      return Row(
        mime: "image/jpx", isoBrands: ["jpx "],
        vipsLoader: VipsLoader(className: "VipsForeignLoadJp2kFile", isUntrusted: true, shrinksOnLoad: false))
    case .jpeg2000Codestream:
      return Row(
        mime: "image/x-jp2-codestream",
        vipsLoader: VipsLoader(className: "VipsForeignLoadJp2kFile", isUntrusted: true, shrinksOnLoad: false))
    case .bmp:
      return Row(mime: "image/bmp", vipsLoader: nil, category: .image, demuxer: "bmp_pipe")
    case .jpegXL:
      // libjxl, in libvips' JPEG XL module, which libvips marks untrusted.
      return Row(
        mime: "image/jxl",
        vipsLoader: VipsLoader(className: "VipsForeignLoadJxlFile", isUntrusted: true, module: "jxl"))
    case .webm: return Row(mime: "video/webm", category: .video, demuxer: "matroska")
    case .matroska: return Row(mime: "video/x-matroska", category: .video, demuxer: "matroska")
    case .avi: return Row(mime: "video/x-msvideo", category: .video, demuxer: "avi")
    case .mpegTransportStream: return Row(mime: "video/MP2T", category: .video, demuxer: "mpegts")
    case .flashVideo: return Row(mime: "video/x-flv", category: .video, demuxer: "flv")
    case .advancedSystemsFormat: return Row(mime: "video/x-ms-asf", category: .video, demuxer: "asf")
    case .amr: return Row(mime: "audio/amr", category: .audio, demuxer: "amr")
    case .dolbyDigital: return Row(mime: "audio/vnd.dolby.dd-raw", category: .audio, demuxer: "ac3,eac3")
    case .flac: return Row(mime: "audio/flac", category: .audio, demuxer: "flac")
    case .ogg: return Row(mime: "audio/ogg", category: .audio, demuxer: "ogg")
    }
  }

  /// The MIME type a refusal names (libmagic 5.44's name, where it has one).
  var mime: String { row.mime }
  /// The ISO BMFF major brands that mark the format (four characters, space-padded).
  var isoBrands: [String] { row.isoBrands }
  /// The libvips loader that reads it, or `nil` when no image rescue converts it.
  var vipsLoader: VipsLoader? { row.vipsLoader }
  /// The category a media rescue delivers it as (video or audio), or `nil` for the image
  /// formats.
  var category: MediaType.Category? { row.category }
  /// The FFmpeg demuxer that reads it, or `nil` when no media rescue reads it.
  var demuxer: String? { row.demuxer }

  /// The format libmagic names `mime`, if it is one of these.
  static func named(_ mime: String) -> ForeignFormat? { allCases.first { $0.mime == mime } }

  /// The format an ISO BMFF major brand marks, if it is a refused one.
  static let byISOBrand: [String: ForeignFormat] = Dictionary(
    allCases.flatMap { format in format.isoBrands.map { ($0, format) } },
    uniquingKeysWith: { first, _ in first })
}

/// A libvips loader a rescue may open a source with (the allowlist is every row of
/// ``MediaType`` and ``ForeignFormat`` that names one).
struct VipsLoader: Sendable, Equatable {
  /// The loader's GObject class name, as `vips_foreign_find_load` answers.
  let className: String
  /// Whether the loader reads every frame of an animation (`n=-1`).
  var readsAnimation = false
  /// Whether libvips marks the loader untrusted (`vips -l` says so): libvips blocks every
  /// untrusted loader (`vips_block_untrusted_set`) and a rescue worker, confined by the kernel,
  /// unblocks these alone (``ImageRescuer/untrustedLoaders``).
  var isUntrusted = false
  /// Whether `vips_thumbnail` may use the loader's own shrink-on-load. libvips 8.14's
  /// thumbnail of a JPEG 2000 asked to shrink only, into a box the image fits, reads its
  /// smallest resolution level (64×48 became 2×2, `vipsthumbnail --size "4096x4096>"` too):
  /// such a source is opened, then thumbnailed from the image.
  var shrinksOnLoad = true
  /// The libvips module that holds the loader (`vips-NAME.so` in libvips' module directory),
  /// or `nil` for a loader built into libvips. A rescue worker loads no module at start-up and
  /// this one only when a source needs it (see ``Libvips/loadModule(_:)``).
  var module: String? = nil
}
