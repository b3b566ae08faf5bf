/// A refused file as a rescuer reads it: why it was refused, what the bytes are, and the facts
/// validation found in them. The pipeline, `attachkit rescue` and the hit policy build one
/// from the validator's verdict; a rescuer decides from it (``Rescuer/canRescue(_:)``) without
/// reading the file, and a ``RescueJob`` carries it to the rescue worker.
public struct Refusal: Error, Sendable, Equatable {
  /// Why a file is refused, as a rescuer tells refusals apart.
  public enum Reason: String, Sendable, Codable, CaseIterable {
    /// The bytes are not an accepted format (`unsupported_type`), or are malformed.
    case unsupportedFormat
    /// A stream's codec is one iOS does not decode (`unsupported_codec`).
    case unsupportedCodec
    /// Over the category's byte limit (`too_large`).
    case tooLarge
    /// An image whose decoded pixels are over the limit (`too_many_pixels`).
    case tooManyPixels
    /// A video over the length limit (`too_long`).
    case tooLong
    /// A video whose length cannot be established (`unknown_duration`).
    case unknownDuration
    /// An accepted movie iOS would play without sound: none of its audio tracks decodes there.
    /// Never a refusal of validation: what ``Rescuer/improvement(for:)`` reports.
    case silentAudio
    /// Anything else (cut short, empty, too complex, a deadline, a read error): no standard
    /// rescuer undoes it.
    case other

    /// The reason of a refusal with `code`.
    init(_ code: AttachmentError.Code) {
      self =
        switch code {
        case .unsupportedType: .unsupportedFormat
        case .unsupportedCodec: .unsupportedCodec
        case .tooLarge: .tooLarge
        case .tooManyPixels: .tooManyPixels
        case .tooLong: .tooLong
        case .unknownDuration: .unknownDuration
        default: .other
        }
    }
  }

  /// Why the file is refused.
  public var reason: Reason
  /// What the bytes are, as a MIME type (the probes' type, or libmagic's name for a type they
  /// do not accept); `nil` when nothing names them.
  public var format: String?
  /// The accepted category the bytes belong to (a JPEG is `.image`); `nil` when they are no
  /// accepted format.
  public var category: MediaType.Category?
  /// The accepted type the bytes were identified as (a VP9 MP4 refused `unsupported_codec` is
  /// `.mp4`), typed, while ``format`` may carry parameters (`video/mp4; codecs="vp09"`) or
  /// name a format that is no accepted type; `nil` then. A rescue's provenance keeps it
  /// (``Rescue/originalType``), so a cache hit answers as a fresh download would.
  public var type: MediaType?
  /// What validation measured of the file (its size always; the rest when it got that far).
  public var facts: MediaFacts
  /// The refusal as the caller gets it when no rescue undoes it (with why, once one tried).
  public var error: AttachmentError

  /// Makes a refusal; its ``reason`` is the error's code and its ``format`` the error's
  /// `detected` type unless given. Its ``type`` is `type` when given, else the accepted type
  /// the format's MIME type names, parameters aside (``MediaType/init(mime:)``).
  public init(
    _ error: AttachmentError, reason: Reason? = nil, format: String? = nil,
    category: MediaType.Category? = nil, type: MediaType? = nil,
    facts: MediaFacts
  ) {
    self.error = error
    self.reason = reason ?? Reason(error.code)
    self.format = format ?? error.detected
    self.type = type ?? self.format.flatMap(MediaType.init(mime:))
    self.category = category
    self.facts = facts
  }
}

/// What validation measured of a file: the facts a rescuer plans from.
public struct MediaFacts: Sendable, Equatable, Codable {
  /// The file's size in bytes (so far, while it streams).
  public var bytes: Int64
  /// Width in pixels (an image's, or the video track's), when known.
  public var width: Int?
  /// Height in pixels, when known.
  public var height: Int?
  /// Duration in seconds, when the container says it.
  public var durationSeconds: Double?
  /// The codec of each audio and video stream, as RFC 6381 strings (see
  /// ``Validation/codecs``); empty when unknown or for images.
  public var codecs: [String]
  /// The number of frames of an animation, when known.
  public var frames: Int?

  /// Makes facts; every one but the size is optional.
  public init(
    bytes: Int64, width: Int? = nil, height: Int? = nil, durationSeconds: Double? = nil,
    codecs: [String] = [],
    frames: Int? = nil
  ) {
    self.bytes = bytes
    self.width = width
    self.height = height
    self.durationSeconds = durationSeconds
    self.codecs = codecs
    self.frames = frames
  }

  /// The facts of an accepted file.
  public init(_ validation: Validation) {
    self.init(
      bytes: validation.bytes, width: validation.width, height: validation.height,
      durationSeconds: validation.durationSeconds, codecs: validation.codecs, frames: validation.frames)
  }
}

extension Refusal {
  /// Whether the refused file is a video: by its category, its accepted type (a VP9 MP4 refused
  /// on its first bytes, before a category was measured), or the foreign format it was named
  /// (a WebM, an AVI: refused before any category was measured).
  var isOfVideo: Bool {
    category == .video || type?.category == .video || format.flatMap(ForeignFormat.named)?.category == .video
  }

  /// An accepted file (`validation`) refused under other limits with `error` (a hit over this
  /// caller's limits, an improvement).
  init(_ error: AttachmentError, reason: Reason? = nil, validation: Validation) {
    self.init(
      error, reason: reason, format: error.detected ?? validation.mime, category: validation.category,
      type: validation.type, facts: MediaFacts(validation))
  }

  /// The refusal streaming gave a body's first bytes (`sniffed`: what they proved, `nil` when
  /// nothing acceptable), `bytes` into it. Its format is libmagic's name when one was asked,
  /// else the identified format's own type (an MP3 over its limit is `audio/mpeg`, not the
  /// M4A a rescue would guess from its streams).
  init(_ error: AttachmentError, sniffed: SniffVerdict?, bytes: Int64) {
    let type = sniffed?.format.row.mediaType
    self.init(
      error, format: error.detected ?? sniffed?.detected ?? type?.mime, category: type?.category, type: type,
      facts: MediaFacts(bytes: bytes, width: sniffed?.width, height: sniffed?.height))
  }

  /// The refusal a body's first bytes already call for: the one streaming deferred for a
  /// rescuer (`deferred`), else the limit its header is over (an image whose dimensions are over
  /// the decode budget); `nil` when they call for none. A rescuer that would undo it may start
  /// its worker while the body is checked (``Rescuer/prepare(for:)``).
  static func predicted(
    deferred: Refusal?, sniffed: SniffVerdict?, bytes: Int64, limits: ValidationLimits
  ) -> Refusal? {
    if let deferred { return deferred }
    guard let sniffed, let type = sniffed.format.row.mediaType,
      let violation = limits.violation(
        type: type, bytes: bytes, durationSeconds: nil, width: sniffed.width, height: sniffed.height)
    else { return nil }
    return Refusal(violation, sniffed: sniffed, bytes: bytes)
  }

  /// The refusal a local file's first bytes (the sniffing window, read once) call for: libmagic's
  /// name for bytes the probes do not identify, or the limit an identified header is over;
  /// `nil` when they call for none or the file cannot be read.
  static func predicted(ofFile path: String, limits: ValidationLimits) -> Refusal? {
    switch firstBytes(ofFile: path, limits: limits) {
    case .refused(let refusal): refusal
    case .identified, nil: nil
    }
  }

  /// The refusal a rescue of a local file prepares for while the file is validated: the one its
  /// first bytes call for (``predicted(ofFile:limits:)``), else, for a video or audio file,
  /// the one they cannot rule out (its duration and codecs are read past the window): a video
  /// too long, audio in a codec iOS does not decode. `attachkit rescue` asks for a rescue, so a
  /// worker started for a file that turns out acceptable costs one start's CPU, and one needed
  /// is ready the moment validation ends.
  static func anticipated(ofFile path: String, limits: ValidationLimits) -> Refusal? {
    switch firstBytes(ofFile: path, limits: limits) {
    case .refused(let refusal): return refusal
    case .identified(let sniffed, let bytes):
      guard let category = sniffed.format.row.mediaType?.category, category != .image else { return nil }
      let possible: AttachmentError =
        category == .video
        ? AttachmentError(.tooLong, "The video may be over the length limit.")
        : AttachmentError(.unsupportedCodec, "The audio may be in a codec iOS does not decode.")
      return Refusal(possible, sniffed: sniffed, bytes: bytes)
    case nil: return nil
    }
  }

  /// What a local file's first bytes show.
  private enum FirstBytes {
    /// The refusal they call for.
    case refused(Refusal)
    /// An accepted format whose header is within the limits, of a file of `bytes`.
    case identified(SniffVerdict, bytes: Int64)
  }

  private static func firstBytes(ofFile path: String, limits: ValidationLimits) -> FirstBytes? {
    guard let file = try? FileBytes(path: path) else { return nil }
    let window = file.bytes(at: 0, count: SniffWindow.maximumBytes)
    if let report = window.withUnsafeBytes({ MediaProbe.identify(prefix: $0) }) {
      let sniffed = SniffVerdict(
        format: report.format, detected: nil, width: report.width, height: report.height)
      if let refusal = predicted(deferred: nil, sniffed: sniffed, bytes: file.count, limits: limits) {
        return .refused(refusal)
      }
      return .identified(sniffed, bytes: file.count)
    }
    let detected = window.withUnsafeBytes { MagicSniffer.mimeType(of: $0) }
    return .refused(Refusal(SniffWindow.refusal(detected: detected), sniffed: nil, bytes: file.count))
  }

  /// This refusal, kept, with why a rescue could not undo it ("… Not rescued: `reason`.").
  func notRescued(_ why: String, verdict: AttachmentError.SourceVerdict? = nil) -> AttachmentError {
    error.notRescued(why, verdict: verdict)
  }
}
