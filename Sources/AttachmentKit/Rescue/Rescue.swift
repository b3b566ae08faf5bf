/// How a delivered file was made from a near-miss: which rescuer made it, what the server sent,
/// and what was done to it. ``Validation`` then describes the delivered file, and this its
/// origin. Any ``Rescuer`` reports one; facts it does not know stay `nil`.
public struct Rescue: Sendable, Equatable, Codable {
  /// What a rescue did, as a stable lower-case word. A rescuer may declare its own actions
  /// (`extension Rescue.Action { static let trimmed = Self(rawValue: "trimmed") }`).
  public struct Action: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The word as scripts see it (`"converted"`).
    public let rawValue: String

    /// Wraps an action word; prefer the static members.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The word itself.
    public var description: String { rawValue }

    /// The format changed (WebP, HEIC, AVIF or a 16-bit PNG to JPEG, PNG or GIF).
    public static let converted = Self(rawValue: "converted")
    /// The pixels were scaled down to fit the byte and decoded-pixel limits.
    public static let downscaled = Self(rawValue: "downscaled")
  }

  /// The ``Rescuer/name`` of the rescuer that made the file (`"image"` for ``ImageRescuer``):
  /// a caller without that rescuer is never served the derivative.
  public var rescuer: String
  /// The MIME type of what the server sent, e.g. `"image/webp"`.
  public var from: String
  /// What was done, in the order it was done; never empty.
  public var actions: [Action]
  /// The size of what the server sent, in bytes.
  public var originalBytes: Int64
  /// The width of what the server sent, in pixels, as stored (before EXIF orientation); `nil`
  /// when the source has no picture or the rescuer did not read it.
  public var originalWidth: Int?
  /// The height of what the server sent, in pixels, as stored; `nil` as for the width.
  public var originalHeight: Int?
  /// The duration of what the server sent, in seconds; `nil` for a still image or when unknown.
  public var originalDurationSeconds: Double?
  /// The codecs of what the server sent (RFC 6381 strings, as ``Validation/codecs``); empty
  /// for an image or when unknown.
  public var originalCodecs: [String]
  /// The accepted type of what the server sent (a VP9 MP4 is ``MediaType/mp4``), typed;
  /// `nil` when it was no accepted type (a WebP, a WebM) or unknown. With ``originalReason``
  /// it carries the original's verdict through the cache: a caller without the rescuer gets
  /// the code a fresh download would (``from`` is for people: it may carry parameters).
  public var originalType: MediaType?
  /// Why what the server sent was refused (`unsupportedCodec` for a VP9 MP4); `nil` when unknown.
  public var originalReason: Refusal.Reason?
  /// What the rescue's libraries logged while they made the file (libvips' and FFmpeg's
  /// warnings, `libvips: read gave 2 warnings`), each once, at most 8 and a count of the
  /// rest; never written to standard error. The pipeline and `Array.attachment(fromFile:rescuingInto:limits:deadline:)`
  /// move them into the delivered file's ``Validation/warnings`` (``Validation/record(_:)``),
  /// which the cache keeps, so this is empty on a ``Validation/rescued``.
  public var warnings: [String] = []

  /// Makes a rescue record (`rescuer` defaults to the image rescuer's name).
  public init(
    rescuer: String = ImageRescuer.name, from: String, actions: [Action], originalBytes: Int64,
    originalWidth: Int? = nil, originalHeight: Int? = nil, originalDurationSeconds: Double? = nil,
    originalCodecs: [String] = []
  ) {
    self.rescuer = rescuer
    self.from = from
    self.actions = actions
    self.originalBytes = originalBytes
    self.originalWidth = originalWidth
    self.originalHeight = originalHeight
    self.originalDurationSeconds = originalDurationSeconds
    self.originalCodecs = originalCodecs
  }

  /// Records the verdict on the original that `refusal` gives (its type and reason), unless
  /// the rescuer already did. The pipeline and the local rescue call it with the refusal they
  /// handed the rescuer.
  public mutating func recordOriginal(_ refusal: Refusal) {
    if originalType == nil { originalType = refusal.type }
    if originalReason == nil { originalReason = refusal.reason }
  }

  /// The original's type and reason of a record written before they were stored, read from
  /// ``from`` as the validator wrote it: its MIME type names the type (parameters aside), and
  /// a `codecs` parameter is only ever written by the codec check (`unsupported_codec`).
  mutating func inferOriginal() {
    if originalType == nil { originalType = MediaType(mime: from) }
    if originalReason == nil, originalType != nil, from.lowercased().contains("codecs=") {
      originalReason = .unsupportedCodec
    }
  }

  /// Decodes a rescue record, also one encoded before ``rescuer``, the duration, the codecs and
  /// the original's type and reason existed (made by the image rescuer, then; the type and
  /// reason are then read from ``from``). Throws `DecodingError` when a field that is always
  /// present is missing or of the wrong type.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    rescuer = try container.decodeIfPresent(String.self, forKey: .rescuer) ?? ImageRescuer.name
    from = try container.decode(String.self, forKey: .from)
    actions = try container.decode([Action].self, forKey: .actions)
    originalBytes = try container.decode(Int64.self, forKey: .originalBytes)
    originalWidth = try container.decodeIfPresent(Int.self, forKey: .originalWidth)
    originalHeight = try container.decodeIfPresent(Int.self, forKey: .originalHeight)
    originalDurationSeconds = try container.decodeIfPresent(Double.self, forKey: .originalDurationSeconds)
    originalCodecs = try container.decodeIfPresent([String].self, forKey: .originalCodecs) ?? []
    warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
    originalType = try? container.decodeIfPresent(MediaType.self, forKey: .originalType)
    originalReason = try? container.decodeIfPresent(Refusal.Reason.self, forKey: .originalReason)
    inferOriginal()
  }
}
