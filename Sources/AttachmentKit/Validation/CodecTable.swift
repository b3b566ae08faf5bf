/// Which codecs iOS decodes: the one decodability table, read by the validator (and the
/// streaming sniffer, when an MP4's `moov` comes first) for every stream of an audio or video
/// file.
///
/// Rows are keyed by codecs string (RFC 6381 for MP4, CAF and MPEG; RFC 2361's decimal format
/// tag for WAV); a string matches its own row, else the row of its longest prefix ending before
/// a dot (`avc1.64001F` → `avc1`). A codec with no row does not decode (for a track that is
/// neither audio nor video, that only adds a warning).
enum CodecTable {
  /// What iOS does with a codec.
  enum Support: Sendable, Equatable {
    /// Every supported iOS device decodes it.
    case decodes
    /// Some devices or iOS versions decode it; `caveat` says which, for the warning.
    case dependsOnDevice(caveat: String)
    /// iOS does not decode it.
    case doesNotDecode
    /// Not audio or video (timed text, timecode, metadata): not played, never judged.
    case notPlayed
  }

  /// What a stream of a codec is.
  enum StreamKind: Sendable, Equatable {
    case video
    case audio
    /// Timed text, captions, timecode, metadata: not played.
    case other
  }

  /// One row: the codec's stream kind, the codec in words and what iOS does with it.
  struct Row: Sendable {
    /// Whether the codec's streams are video, audio or neither.
    let kind: StreamKind
    /// The codec in words, e.g. "DTS audio".
    let name: String
    /// What iOS does with it.
    let support: Support
  }

  // Sources, cited per group below:
  // [T]  Apple, UNNotificationAttachment: movie types MPEG, MPEG-2 video, MPEG-4; audio MP3,
  //      MPEG-4 audio, WAV, AIFF (shared/reference/attachment-rules.md).
  // [CM] Core Media CMFormatDescription.h codec types with system decoders on iOS:
  //      kCMVideoCodecType_H264 / _HEVC / _MPEG4Video / _MPEG2Video / _MPEG1Video / _JPEG.
  // [AT] AudioToolbox CoreAudioBaseTypes.h formats iOS decodes: kAudioFormatLinearPCM,
  //      _MPEG4AAC (+ _HE, _HE_V2, _LD, _ELD), _AppleLossless, _AC3, _Enhanced_AC3 (iOS 9),
  //      _MPEGLayer3, _ULaw, _ALaw, _AppleIMA4, _DVIIntelIMA.
  // [MPG] Apple, Multimedia Programming Guide, "Using Audio", iOS audio playback formats:
  //      AAC, ALAC, HE-AAC, iLBC, IMA4, linear PCM, "MP3 (MPEG-1 audio layer 3)", µ-law and
  //      a-law. MPEG audio Layers I and II are not among them (the header names
  //      kAudioFormatMPEGLayer1/2, which macOS decodes; iOS's list does not), so they do not
  //      decode. In MP4 and MPEG-PS the esds object type 0x6B / 0x69 does not say the layer
  //      (MP3 in practice); an MPEG-PS packet's first frame header does, and is read.
  // [18] Issue 18's run of a player's test corpus: VP9, VVC, DTS, TrueHD, AC-4, MPEG-H, IAMF
  //      do not play; AV1 needs an AV1 decoder (A17 Pro / M3 and later); Opus and ISO PCM
  //      depend on the iOS version.
  // [14496] ISO/IEC 14496-12/15 and MP4RA: sample entries for timed text, timecode and
  //      metadata, which are not media to decode.
  static let rows: [String: Row] = [
    // Video that decodes [CM]
    "avc1": Row(kind: .video, name: "H.264 video", support: .decodes),
    "avc3": Row(kind: .video, name: "H.264 video", support: .decodes),
    "hvc1": Row(kind: .video, name: "HEVC video", support: .decodes),
    "hev1": Row(kind: .video, name: "HEVC video", support: .decodes),
    "mp4v.20": Row(kind: .video, name: "MPEG-4 Part 2 video", support: .decodes),
    "mp4v.6A": Row(kind: .video, name: "MPEG-1 video", support: .decodes),  // [T] "MPEG" movies, [CM]
    "mp4v.60": Row(kind: .video, name: "MPEG-2 video", support: .decodes),  // [T] "MPEG-2 video", [CM]
    "mp4v.61": Row(kind: .video, name: "MPEG-2 video", support: .decodes),
    "mp4v.62": Row(kind: .video, name: "MPEG-2 video", support: .decodes),
    "mp4v.63": Row(kind: .video, name: "MPEG-2 video", support: .decodes),
    "mp4v.64": Row(kind: .video, name: "MPEG-2 video", support: .decodes),
    "mp4v.65": Row(kind: .video, name: "MPEG-2 video", support: .decodes),
    "jpeg": Row(kind: .video, name: "Motion JPEG video", support: .decodes),
    // An mp4v / mp4a entry whose esds cannot be read: by far most often MPEG-4 video / AAC.
    // Matched only exactly (see `exactOnly`), so an unknown object type does not fall back to it.
    "mp4v": Row(kind: .video, name: "MPEG-4 video", support: .decodes),
    "mp4a": Row(kind: .audio, name: "MPEG-4 audio", support: .decodes),
    // Video that depends on the device [18]
    "av01": Row(
      kind: .video, name: "AV1 video",
      support: .dependsOnDevice(caveat: "only devices with an AV1 decoder (A17 Pro, M3 and later) play it")),
    "dav1": Row(
      kind: .video, name: "Dolby Vision AV1 video",
      support: .dependsOnDevice(caveat: "only devices with an AV1 decoder (A17 Pro, M3 and later) play it")),
    "dvh1": Row(
      kind: .video, name: "Dolby Vision HEVC video",
      support: .dependsOnDevice(caveat: "devices without Dolby Vision show it with altered colours")),
    "dvhe": Row(
      kind: .video, name: "Dolby Vision HEVC video",
      support: .dependsOnDevice(caveat: "devices without Dolby Vision show it with altered colours")),
    // Video that does not decode [18]
    "vp08": Row(kind: .video, name: "VP8 video", support: .doesNotDecode),
    "vp09": Row(kind: .video, name: "VP9 video", support: .doesNotDecode),
    "vvc1": Row(kind: .video, name: "VVC (H.266) video", support: .doesNotDecode),
    "vvi1": Row(kind: .video, name: "VVC (H.266) video", support: .doesNotDecode),
    "encv": Row(kind: .video, name: "encrypted video", support: .doesNotDecode),

    // Audio that decodes [AT]
    "mp4a.40.2": Row(kind: .audio, name: "AAC-LC audio", support: .decodes),
    "mp4a.40.5": Row(kind: .audio, name: "HE-AAC audio", support: .decodes),
    "mp4a.40.29": Row(kind: .audio, name: "HE-AAC v2 audio", support: .decodes),
    "mp4a.40.23": Row(kind: .audio, name: "AAC-LD audio", support: .decodes),
    "mp4a.40.39": Row(kind: .audio, name: "AAC-ELD audio", support: .decodes),
    "mp4a.40.34": Row(kind: .audio, name: "MP3 audio", support: .decodes),
    "mp4a.67": Row(kind: .audio, name: "AAC-LC audio (MPEG-2)", support: .decodes),
    "mp4a.6B": Row(kind: .audio, name: "MPEG-1 audio", support: .decodes),  // the layer unsaid [MPG]
    "mp4a.69": Row(kind: .audio, name: "MPEG-2 audio", support: .decodes),
    "mp3": Row(kind: .audio, name: "MP3 audio", support: .decodes),  // MPEG-1/2/2.5 Layer III [MPG]
    "alac": Row(kind: .audio, name: "Apple Lossless audio", support: .decodes),
    "ac-3": Row(kind: .audio, name: "AC-3 audio", support: .decodes),
    "mp4a.A5": Row(kind: .audio, name: "AC-3 audio", support: .decodes),
    "ec-3": Row(kind: .audio, name: "E-AC-3 audio", support: .decodes),
    "mp4a.A6": Row(kind: .audio, name: "E-AC-3 audio", support: .decodes),
    "lpcm": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "sowt": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "twos": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "raw": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "in24": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "in32": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "fl32": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "fl64": Row(kind: .audio, name: "linear PCM audio", support: .decodes),
    "ulaw": Row(kind: .audio, name: "μ-law audio", support: .decodes),
    "alaw": Row(kind: .audio, name: "A-law audio", support: .decodes),
    "ima4": Row(kind: .audio, name: "IMA 4:1 ADPCM audio", support: .decodes),
    // WAVE format tags (RFC 2361 decimal) [AT]
    "1": Row(kind: .audio, name: "PCM audio", support: .decodes),
    "3": Row(kind: .audio, name: "floating-point PCM audio", support: .decodes),
    "6": Row(kind: .audio, name: "A-law audio", support: .decodes),
    "7": Row(kind: .audio, name: "μ-law audio", support: .decodes),
    "17": Row(kind: .audio, name: "IMA ADPCM audio", support: .decodes),
    "85": Row(kind: .audio, name: "MP3 audio", support: .decodes),
    // Audio that depends on the OS version [18]
    "opus": Row(
      kind: .audio, name: "Opus audio",
      support: .dependsOnDevice(caveat: "only recent iOS versions play it in this container")),
    "mp4a.AD": Row(
      kind: .audio, name: "Opus audio",
      support: .dependsOnDevice(caveat: "only recent iOS versions play it in this container")),
    "flac": Row(
      kind: .audio, name: "FLAC audio", support: .dependsOnDevice(caveat: "only iOS 11 and later play it")),
    "fpcm": Row(
      kind: .audio, name: "ISO floating-point PCM audio",
      support: .dependsOnDevice(caveat: "only recent iOS versions play it")),
    "ipcm": Row(
      kind: .audio, name: "ISO integer PCM audio",
      support: .dependsOnDevice(caveat: "only recent iOS versions play it")),
    "mp4a.40.42": Row(
      kind: .audio, name: "xHE-AAC audio",
      support: .dependsOnDevice(caveat: "only recent iOS versions play it")),
    // Audio that does not decode [MPG]
    "mp1": Row(kind: .audio, name: "MPEG audio Layer I", support: .doesNotDecode),
    "mp2": Row(kind: .audio, name: "MPEG audio Layer II", support: .doesNotDecode),
    // Audio that does not decode [18]
    "2": Row(kind: .audio, name: "Microsoft ADPCM audio", support: .doesNotDecode),  // WAVE format tag 2
    // WAVE_FORMAT_EXTENSIBLE whose SubFormat GUID is not the standard one of PCM, float, A-law
    // or μ-law (WAVProbe keeps the extensible tag then): ffmpeg finds no decoder for it.
    "65534": Row(
      kind: .audio, name: "WAVE_FORMAT_EXTENSIBLE audio of an unknown sub-format", support: .doesNotDecode),
    "dtsc": Row(kind: .audio, name: "DTS audio", support: .doesNotDecode),
    "dtsh": Row(kind: .audio, name: "DTS-HD audio", support: .doesNotDecode),
    "dtsl": Row(kind: .audio, name: "DTS-HD lossless audio", support: .doesNotDecode),
    "dtse": Row(kind: .audio, name: "DTS Express audio", support: .doesNotDecode),
    "dtsx": Row(kind: .audio, name: "DTS:X audio", support: .doesNotDecode),
    "mlpa": Row(kind: .audio, name: "Dolby TrueHD audio", support: .doesNotDecode),
    "ac-4": Row(kind: .audio, name: "AC-4 audio", support: .doesNotDecode),
    "mha1": Row(kind: .audio, name: "MPEG-H 3D audio", support: .doesNotDecode),
    "mhm1": Row(kind: .audio, name: "MPEG-H 3D audio", support: .doesNotDecode),
    "iamf": Row(kind: .audio, name: "IAMF audio", support: .doesNotDecode),
    "enca": Row(kind: .audio, name: "encrypted audio", support: .doesNotDecode),

    // Not media [14496]
    "tx3g": Row(kind: .other, name: "3GPP timed text", support: .notPlayed),
    "text": Row(kind: .other, name: "QuickTime text", support: .notPlayed),
    "wvtt": Row(kind: .other, name: "WebVTT text", support: .notPlayed),
    "stpp": Row(kind: .other, name: "TTML text", support: .notPlayed),
    "c608": Row(kind: .other, name: "CEA-608 captions", support: .notPlayed),
    "c708": Row(kind: .other, name: "CEA-708 captions", support: .notPlayed),
    "tmcd": Row(kind: .other, name: "timecode", support: .notPlayed),
    "mebx": Row(kind: .other, name: "metadata", support: .notPlayed),
    "subp": Row(kind: .other, name: "DVD subpictures", support: .notPlayed),
  ]

  /// A codec a rescue worker may decode, by FFmpeg's names, tied to its row above.
  struct Decoded: Sendable {
    /// FFmpeg's codec name (`avcodec_get_name`: `h264`, `aac`, `wmv3`).
    let codec: String
    /// The FFmpeg decoders allowed to read it (a codec may have several: `mp3float`, `mp3`).
    let decoders: [String]
    /// Its codecs string once written to MP4 or M4A (the key of its row above), or nil when it
    /// has none there: iOS does not decode it, and a rescue re-encodes it.
    let codecs: String?
    /// Whether a rescue copies it into MP4 or M4A unchanged when its row says every device
    /// decodes it (else it is re-encoded: MPEG-4 Part 2 decodes on iOS only in its Simple
    /// profile, which its parameters do not say).
    let copied: Bool

    init(_ codec: String, decoders: [String]? = nil, codecs: String? = nil, copied: Bool = false) {
      self.codec = codec
      self.decoders = decoders ?? [codec]
      self.codecs = codecs
      self.copied = copied
    }
  }

  /// The codecs FFmpeg decodes in a rescue worker: the decoder allowlist (nothing else is ever
  /// opened on untrusted input) and what a rescue copies. Every decoder runs under the same
  /// budget, read before a frame is decoded (see `MediaInput`): the declared duration, frame
  /// size and frame count, then `max_pixels` at every keyframe; audio under the duration.
  static let decoded: [Decoded] = [
    // Video: the modern codecs, then what phones, cameras and old sites sent (3GPP's H.263,
    // Flash's Sorenson H.263, Windows Media, AVI's Microsoft MPEG-4 and Motion JPEG).
    Decoded("h264", codecs: "avc1", copied: true), Decoded("hevc", codecs: "hvc1", copied: true),
    Decoded("vp8", codecs: "vp08"), Decoded("vp9", codecs: "vp09"),
    Decoded("av1", decoders: ["libdav1d", "av1"], codecs: "av01"), Decoded("mpeg4", codecs: "mp4v.20"),
    Decoded("mpeg1video", codecs: "mp4v.6A"), Decoded("mpeg2video", codecs: "mp4v.61"),
    Decoded("h263"), Decoded("h263i"), Decoded("h263p"), Decoded("flv1", decoders: ["flv"]),
    Decoded("msmpeg4v1"), Decoded("msmpeg4v2"), Decoded("msmpeg4v3", decoders: ["msmpeg4"]),
    Decoded("wmv1"), Decoded("wmv2"), Decoded("wmv3"), Decoded("vc1"), Decoded("mjpeg", codecs: "jpeg"),
    // Still images FFmpeg reads where libvips would need ImageMagick.
    Decoded("bmp"),
    // Audio that a rescue copies into MP4 or M4A: AAC; AC-3 and E-AC-3 from cameras and
    // broadcasts; MP3.
    Decoded("aac", decoders: ["aac", "aac_fixed"], codecs: "mp4a.40.2", copied: true),
    Decoded("ac3", codecs: "ac-3", copied: true), Decoded("eac3", codecs: "ec-3", copied: true),
    Decoded("mp3", decoders: ["mp3float", "mp3"], codecs: "mp4a.6B", copied: true),
    // Audio re-encoded as AAC.
    Decoded("mp2", decoders: ["mp2float", "mp2"], codecs: "mp2"),
    Decoded("mp1", decoders: ["mp1float", "mp1"], codecs: "mp1"), Decoded("flac", codecs: "flac"),
    Decoded("vorbis"), Decoded("opus", decoders: ["opus", "libopus"], codecs: "opus"),
    Decoded("alac", codecs: "alac"), Decoded("dts", decoders: ["dca"], codecs: "dtsc"),
    Decoded("truehd", codecs: "mlpa"), Decoded("mlp"),
    Decoded("pcm_s16le", codecs: "1"), Decoded("pcm_s16be", codecs: "twos"),
    Decoded("pcm_s24le", codecs: "1"),
    Decoded("pcm_s24be", codecs: "in24"), Decoded("pcm_s32le", codecs: "1"),
    Decoded("pcm_s32be", codecs: "in32"),
    Decoded("pcm_f32le", codecs: "3"), Decoded("pcm_f32be", codecs: "fl32"),
    Decoded("pcm_f64le", codecs: "3"),
    Decoded("pcm_f64be", codecs: "fl64"), Decoded("pcm_u8", codecs: "1"), Decoded("pcm_s8", codecs: "twos"),
    Decoded("pcm_alaw", codecs: "alaw"), Decoded("pcm_mulaw", codecs: "ulaw"),
    Decoded("adpcm_ms", codecs: "2"),
    Decoded("adpcm_ima_wav", codecs: "17"), Decoded("adpcm_ima_qt", codecs: "ima4"),
    Decoded("amr_nb", decoders: ["amrnb"]), Decoded("amr_wb", decoders: ["amrwb"]), Decoded("speex"),
    Decoded("wmav1"), Decoded("wmav2"), Decoded("wmapro"), Decoded("adpcm_swf"), Decoded("nellymoser"),
  ]

  /// The FFmpeg decoders a rescue worker may run (``decoded``'s).
  static let allowedDecoders: Set<String> = Set(decoded.flatMap(\.decoders))

  /// FFmpeg's names of the codecs a rescue copies into MP4 or M4A as they are: ``decoded``'s
  /// copied rows whose row above says every device decodes them.
  static let copiedCodecs: Set<String> = Set(
    decoded.compactMap { entry in
      entry.copied && entry.codecs.flatMap(row(for:))?.support == .decodes ? entry.codec : nil
    })

  /// The codecs whose samples the structural probes judge whole: linear PCM, A-law and μ-law
  /// hold no entropy-coded data, so every sample a probe counts decodes, and a decoder refuses
  /// nothing the probes did not read (format, channels, sample size, rate). A stream of any
  /// other codec is opened and started by its decoder before it is accepted
  /// (``DecodeCheckConfiguration``).
  static let structurallyDecoded: Set<String> = [
    "lpcm", "sowt", "twos", "raw", "in24", "in32", "fl32", "fl64", "ulaw", "alaw", "1", "3", "6", "7",
  ]

  /// Rows a longer codecs string never falls back to: `mp4a.DD` (Vorbis) is not `mp4a`.
  private static let exactOnly: Set<String> = ["mp4a", "mp4v"]

  /// The row of `codec`: its own, else its longest prefix's before a dot (not an `exactOnly`
  /// one); nil when none.
  static func row(for codec: String) -> Row? {
    if let row = rows[codec] { return row }
    var key = Substring(codec)
    while let dot = key.lastIndex(of: ".") {
      key = key[..<dot]
      if !exactOnly.contains(String(key)), let row = rows[String(key)] { return row }
    }
    return nil
  }

  /// The codec in words: its row's name, else "`kind` in format 'codec'"; for a sample entry
  /// that cannot describe its stream, that name and why.
  static func name(of stream: MediaStream) -> String {
    guard stream.isDescribed else {
      return name(of: MediaStream(kind: stream.kind, codec: stream.codec))
        + " whose sample entry gives no channel count or sample rate"
    }
    if let row = row(for: stream.codec) { return row.name }
    let kind: String
    switch stream.kind {
    case .video: kind = "video"
    case .audio: kind = "audio"
    case .other: kind = "a track"
    }
    return "\(kind) in format '\(stream.codec)'"
  }

  /// What iOS does with `stream`: its row's support, else `.doesNotDecode` (also for a
  /// sample entry that cannot describe its stream).
  static func support(of stream: MediaStream) -> Support {
    guard stream.isDescribed else { return .doesNotDecode }
    return row(for: stream.codec)?.support ?? .doesNotDecode
  }
}
