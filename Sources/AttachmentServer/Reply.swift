import AttachmentKit
import Glibc

/// A response to queue: status, headers and body, plus what the metrics and the access log
/// record about it.
struct Reply: Sendable {
  /// Where the body comes from.
  enum Body: Sendable {
    /// No body (a `304`, a `HEAD`-only answer is handled by libmicrohttpd itself).
    case empty
    /// Bytes in memory (JSON, metrics text): small answers only.
    case bytes([UInt8])
    /// A slice of an open file, sent with sendfile. The reply owns `descriptor` until it is
    /// queued (libmicrohttpd closes it when done) or ``close()`` is called.
    case file(descriptor: Int32, offset: Int64, length: Int64)
  }

  var status: Int
  var headers: [(String, String)]
  var body: Body
  /// The outcome label: the attachment's source, an error code, `not_modified`, or `ok`.
  var outcome: String
  /// The URL the request was about, with credentials redacted (``Redaction/redact(_:)``), for
  /// the access log.
  var url: String? = nil
  /// The error an error answer is made of (``error(_:url:)``), so that its body can be said
  /// again without the origin's details (``HiddenOrigin``); `nil` for any other answer.
  var error: AttachmentError? = nil
  /// The error code a fallback answer stands in for (``FallbackAnswer``); `nil` for any other
  /// answer.
  var fallbackFor: String? = nil

  /// The body's length in bytes.
  var bodyBytes: Int64 {
    switch body {
    case .empty: 0
    case .bytes(let bytes): Int64(bytes.count)
    case .file(_, _, let length): length
    }
  }

  /// Closes the file of a reply that will not be queued.
  func close() {
    if case .file(let descriptor, _, _) = body { _ = Glibc.close(descriptor) }
  }

  /// A small text or JSON answer that no cache may keep.
  static func text(_ status: Int, _ text: String, contentType: String, outcome: String) -> Reply {
    Reply(
      status: status, headers: [("Content-Type", contentType), ("Cache-Control", "no-store")],
      body: .bytes(Array(text.utf8)), outcome: outcome)
  }

  /// The JSON error answer for `error`: `{"error": {"code": …, "message": …}}` with the status
  /// its code maps to (``ErrorStatus``); a local error's message is not sent (``PublicError``).
  static func error(_ error: AttachmentError, url: String? = nil) -> Reply {
    let error = PublicError.exposed(error)
    var reply = text(
      ErrorStatus.of(error), errorJSON(error).text + "\n", contentType: "application/json",
      outcome: error.code.rawValue)
    reply.url = url
    reply.error = error
    // Overloaded is brief: a client (or a tier) may ask again in a second.
    if reply.status == 503 { reply.headers.append(("Retry-After", "1")) }
    return reply
  }

  /// The error object the proxy answers with.
  static func errorJSON(_ error: AttachmentError) -> JSON {
    var fields: [(key: String, value: JSON)] = [
      ("code", .string(error.code.rawValue)), ("message", .string(error.message)),
    ]
    if let detected = error.detected { fields.append(("detected", .string(detected))) }
    if let status = error.httpStatus { fields.append(("httpStatus", .int(Int64(status)))) }
    return .object([("error", .object(fields))])
  }
}
