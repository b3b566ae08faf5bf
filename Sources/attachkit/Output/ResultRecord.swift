import AttachmentKit

/// One input's result, as the command line reports it: a JSON line (`--json`) or a table row.
/// The JSON field names are a stable contract documented in docs/command-line.md.
struct ResultRecord: Sendable {
  /// What happened to one input.
  enum Outcome: String {
    /// The bytes are an acceptable attachment.
    case accepted
    /// The bytes are not an acceptable attachment.
    case rejected
    /// The fetch itself did not succeed.
    case failed
  }

  /// Where an accepted result came from: the pipeline's ``Attachment/Source``, or a local
  /// file (`validate`, `rescue`), whose input is a path rather than a URL.
  enum Origin: String {
    case network, cache, revalidated, file

    init(_ source: Attachment.Source) {
      switch source {
      case .network: self = .network
      case .cache: self = .cache
      case .revalidated: self = .revalidated
      }
    }

    /// Whether the cache answered (a hit, or a copy the server confirmed).
    var isCacheAnswer: Bool { self == .cache || self == .revalidated }
  }

  var input: String
  var outcome: Outcome
  var source: Origin?
  var validation: Validation?
  var path: String?
  var bytesTransferred: Int64?
  var timings: TransferTimings?
  var totalMicroseconds: Int64
  var isStale = false
  var error: AttachmentError?
  /// Set when `fetch --fallback` delivered the fallback URL in place of the input: every field
  /// but `input` then describes the fallback's file.
  var fallback: Fallback?

  /// What `fetch --fallback` stood in for: the fallback URL and the input's own failure.
  struct Fallback: Sendable {
    /// The fallback URL as given.
    var url: String
    /// Why the input itself was not delivered.
    var error: AttachmentError
  }

  /// The fallback's accepted `record` delivered in place of `input`, which failed with `error`:
  /// an accepted record naming the input, the fallback URL and the input's own error, timed
  /// from the input's start (`totalMicroseconds`).
  init(input: String, fallback record: ResultRecord, failure error: AttachmentError, totalMicroseconds: Int64)
  {
    self = record
    self.input = input
    self.totalMicroseconds = totalMicroseconds
    fallback = Fallback(url: record.input, error: SettingNames.reworded(error))
  }

  /// The result of an attachment the pipeline returned.
  init(input: String, attachment: Attachment) {
    self.input = input
    outcome = .accepted
    source = Origin(attachment.source)
    validation = attachment.validation
    path = attachment.path
    bytesTransferred = attachment.bytesTransferred
    timings = attachment.transferTimings
    totalMicroseconds = attachment.totalMicroseconds
    isStale = attachment.isStale
  }

  /// The result of a local file the validator accepted; `path` is where the file it describes
  /// lies (`nil`: nowhere any more, standard input's spooled copy).
  init(input: String, path: String?, validation: Validation, totalMicroseconds: Int64) {
    self.input = input
    outcome = .accepted
    source = .file
    self.validation = validation
    self.path = path
    self.totalMicroseconds = totalMicroseconds
  }

  /// The result of an input that failed or was refused.
  init(input: String, error: AttachmentError, source: Origin?, totalMicroseconds: Int64) {
    self.input = input
    outcome = error.isRejection ? .rejected : .failed
    self.source = source
    self.error = SettingNames.reworded(error)
    // A download cut off (Ctrl-C, the deadline) still transferred what it received.
    bytesTransferred = error.bytesReceived
    self.totalMicroseconds = totalMicroseconds
  }

  /// The input as printed: a local path escaped as text, a URL redacted.
  var displayedInput: String { source == .file ? Terminal.safe(input) : Terminal.safeURL(input) }

  /// The JSON object: fields without a value are left out, never invented.
  var json: JSON {
    var object = JSONObject()
    object.set("input", displayedInput)
    object.set("outcome", outcome.rawValue)
    object.set("source", source?.rawValue)
    if let validation {
      object.set("type", validation.type.family)
      object.set("category", validation.category.rawValue)
      object.set("mime", validation.mime)
      object.set("uti", validation.uti)
      object.set("extension", validation.fileExtension)
      object.set("bytes", validation.bytes)
    }
    object.set("bytesTransferred", bytesTransferred)
    object.set("sha256", validation?.sha256)
    object.set("path", path)
    object.set("width", validation?.width)
    object.set("height", validation?.height)
    object.set("frames", validation?.frames)
    object.set("durationSeconds", validation?.durationSeconds)
    object.set("posterTimeSeconds", validation?.posterTimeSeconds)
    if let validation { object.set("codecs", .array(validation.codecs.map { .string($0) })) }
    if let rescued = validation?.rescued {
      var rescue = JSONObject()
      rescue.set("by", rescued.rescuer)
      rescue.set("from", rescued.from)
      rescue.set("actions", .array(rescued.actions.map { .string($0.rawValue) }))
      rescue.set("originalBytes", rescued.originalBytes)
      rescue.set("originalWidth", rescued.originalWidth)
      rescue.set("originalHeight", rescued.originalHeight)
      rescue.set("originalDurationSeconds", rescued.originalDurationSeconds)
      if !rescued.originalCodecs.isEmpty {
        rescue.set("originalCodecs", .array(rescued.originalCodecs.map { .string($0) }))
      }
      object.set("rescued", rescue.value)
    }
    if isStale { object.set("stale", true) }
    if let fallback {
      object.set("fallback", true)
      object.set("fallbackURL", Terminal.safeURL(fallback.url))
      object.set("originalError", Self.errorJSON(fallback.error))
    }
    object.set("warnings", .array((validation?.warnings ?? []).map { .string($0) }))
    var times = JSONObject()
    times.set("totalMs", Self.milliseconds(totalMicroseconds))
    if let timings {
      times.set("dnsMs", Self.milliseconds(timings.dnsMicroseconds))
      times.set("connectMs", Self.milliseconds(timings.connectMicroseconds))
      times.set("tlsMs", Self.milliseconds(timings.tlsMicroseconds))
      times.set("firstByteMs", Self.milliseconds(timings.firstByteMicroseconds))
      times.set("attempts", timings.attempts)
      times.set("resumedBytes", timings.resumedBytes)
    }
    object.set("timings", times.value)
    if let error { object.set("error", Self.errorJSON(error)) }
    return object.value
  }

  /// An error's JSON object: `code`, `message`, `detected`, `httpStatus`.
  static func errorJSON(_ error: AttachmentError) -> JSON {
    var detail = JSONObject()
    detail.set("code", error.code.rawValue)
    detail.set("message", error.message)
    detail.set("detected", error.detected)
    detail.set("httpStatus", error.httpStatus)
    return detail.value
  }

  /// Microseconds as milliseconds with three decimals.
  static func milliseconds(_ microseconds: Int64) -> Double {
    Double(microseconds) / 1000
  }
}
