/// What validation found an accepted file to be.
public struct Validation: Sendable, Equatable, Codable {
  /// The media type the bytes prove.
  public var type: MediaType
  /// What libmagic said of the first bytes, when it was asked (it may be vague or wrong;
  /// ``type`` is the answer). libmagic only names refused files, so for an accepted file this
  /// is `nil` unless streaming asked it while the first bytes could not yet be told apart.
  public var detectedMIME: String?
  /// The file's size in bytes.
  public var bytes: Int64
  /// The SHA-256 of the file, 64 lower-case hex digits.
  public var sha256: String
  /// Image width in pixels (or the video track's width), when known.
  public var width: Int?
  /// Image height in pixels (or the video track's height), when known.
  public var height: Int?
  /// The number of frames of an animated GIF (1 for a still one), when known.
  public var frames: Int?
  /// The duration in seconds, when the container says it (a video always has one).
  public var durationSeconds: Double?
  /// The codec of each audio and video stream, each once, as RFC 6381 `codecs` strings
  /// (`avc1.64001F`, `hvc1.1.6.L93.B0`, `mp4a.40.2`, `ac-3`, `opus`, `mp3`; WAV format tags in
  /// RFC 2361's decimal form, `1` for PCM). Empty for images.
  public var codecs: [String] = []
  /// Things worth knowing that did not stop the file, such as a type outside Apple's published
  /// table.
  public var warnings: [String]
  /// How this file was made from a near-miss the server sent (see ``ImageRescuer``), or `nil`
  /// when it is the server's own bytes. Every other field describes the delivered file.
  public var rescued: Rescue? = nil
  /// For a video: the proposed poster time, in seconds from its start, for iOS's
  /// `UNNotificationAttachmentOptionsThumbnailTimeKey`: the time of its first frame that is not
  /// nearly black within its first seconds (0 when the first frame is bright), see
  /// ``PosterTimeConfiguration``. `nil` when none was proposed (not a video, the pipeline's
  /// ``PipelineConfiguration/posterTime`` off, the search's budget spent, dark all through):
  /// iOS then takes the first frame. Found once on the miss and stored with the entry, so every
  /// hit carries it without decoding anything.
  public var posterTimeSeconds: Double? = nil

  /// Image, video or audio.
  public var category: MediaType.Category { type.category }
  /// The UTI to give iOS as a type hint.
  public var uti: String { type.uti }
  /// The canonical file extension, without the dot.
  public var fileExtension: String { type.fileExtension }
  /// The MIME type of ``type``.
  public var mime: String { type.mime }
}

extension Validation {
  /// Records that this file was made by `rescue`: its provenance becomes ``rescued``, and what
  /// its libraries logged (``Rescue/warnings``) joins ``warnings``, each once.
  public mutating func record(_ rescue: Rescue) {
    var provenance = rescue
    for warning in provenance.warnings where !warnings.contains(warning) { warnings.append(warning) }
    provenance.warnings = []
    rescued = provenance
  }

  /// Decodes a validation, also one encoded before ``codecs`` or ``posterTimeSeconds``
  /// existed (they then decode as empty and `nil`). Throws `DecodingError` when a field is missing or of the wrong type.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    type = try container.decode(MediaType.self, forKey: .type)
    detectedMIME = try container.decodeIfPresent(String.self, forKey: .detectedMIME)
    bytes = try container.decode(Int64.self, forKey: .bytes)
    sha256 = try container.decode(String.self, forKey: .sha256)
    width = try container.decodeIfPresent(Int.self, forKey: .width)
    height = try container.decodeIfPresent(Int.self, forKey: .height)
    frames = try container.decodeIfPresent(Int.self, forKey: .frames)
    durationSeconds = try container.decodeIfPresent(Double.self, forKey: .durationSeconds)
    codecs = try container.decodeIfPresent([String].self, forKey: .codecs) ?? []
    warnings = try container.decode([String].self, forKey: .warnings)
    rescued = try container.decodeIfPresent(Rescue.self, forKey: .rescued)
    posterTimeSeconds = try container.decodeIfPresent(Double.self, forKey: .posterTimeSeconds)
  }
}
