/// The HTTP rules of one request's responses, as a value: which response is final, whether its
/// status, declared length and header size are acceptable, whether the body stays within its
/// limit, and whether what arrived is complete.
///
/// It does no I/O and knows nothing of libcurl: ``Transfer`` feeds it the header lines and body
/// sizes libcurl delivers and acts on its answers, so every rule here is tested as a value.
struct ResponseStateMachine {
  /// The limits and facts the rules depend on.
  struct Rules {
    /// The largest body accepted, in bytes.
    var maximumBodyBytes: Int64
    /// The cap on all response header bytes, redirects included.
    var maximumHeaderBytes: Int
    /// Whether the request carried a validator, so `304 Not Modified` is an answer.
    var isConditional: Bool
    /// Whether redirect targets must be checked by host (requests go through a proxy, so the
    /// socket-level address guard cannot see them).
    var checksRedirectHosts: Bool
    /// Whether each redirect's target goes to the transfer to check (an origin allowlist)
    /// before libcurl follows it.
    var checksRedirectTargets = false
  }

  /// What to do after a header line.
  enum HeaderAction {
    /// Keep going: more header lines, or a redirect libcurl follows.
    case proceed
    /// A redirect to `location` (as sent: absolute or relative) that libcurl follows unless
    /// the transfer's check of its target stops it (``Rules/checksRedirectTargets``).
    case redirect(location: String)
    /// The final response's head is complete and acceptable; its body comes next, from the
    /// first byte (any bytes of an earlier attempt are to be dropped: see ``bodyRestarts``).
    case finalHead(ResponseHead)
    /// A `206` continues the body of an earlier attempt where it stopped: its bytes are
    /// appended, and the head (the body's first response's) was seen already.
    case resumed(ResponseHead)
    /// Stop the transfer with this error.
    case fail(AttachmentError)
  }

  private let rules: Rules
  private var headerBytes = 0
  private var status = 0
  private var headers = ResponseHeaders()
  /// The final response's head, once it is complete.
  private(set) var finalHead: ResponseHead?
  /// Body bytes accepted so far, over every attempt whose bytes are kept.
  private(set) var bodyBytes: Int64 = 0
  /// The body bytes held before this attempt's response (a ranged attempt's starting offset).
  private var carriedBytes: Int64 = 0
  /// Where this attempt asked its body to start (`Range: bytes=N-`), or `nil`.
  private var requestedOffset: Int64?
  /// The head of the response the body's bytes came from (the first, for a resumed body).
  private(set) var bodyHead: ResponseHead?
  /// Whether the last final head dropped the bytes of an earlier attempt (a `200` answering a
  /// ranged request, or any body after an attempt that was not resumed).
  private(set) var bodyRestarts = false

  /// Starts with no response seen.
  init(rules: Rules) {
    self.rules = rules
  }

  /// Starts another attempt of the same request: the header count and the last head are
  /// forgotten; the body bytes are kept, and the attempt asks for the rest from
  /// `resumingAt` (`nil`: an attempt from the first byte, whose body replaces them).
  mutating func beginAttempt(resumingAt offset: Int64?) {
    headerBytes = 0
    status = 0
    headers = ResponseHeaders()
    finalHead = nil
    requestedOffset = offset
    bodyRestarts = false
  }

  /// Takes one header line of `byteCount` bytes (its line break included).
  mutating func receive(_ line: HeaderLine, byteCount: Int) -> HeaderAction {
    headerBytes += byteCount
    if headerBytes > rules.maximumHeaderBytes {
      return .fail(
        AttachmentError(.headersTooLarge, "The response headers exceed \(rules.maximumHeaderBytes) bytes."))
    }
    switch line {
    case .status(let code):
      status = code
      headers = ResponseHeaders()
      return .proceed
    case .field(let name, let value):
      headers.append(name: name, value: value)
      return .proceed
    case .other:
      return .proceed
    case .end:
      return headEnded()
    }
  }

  private mutating func headEnded() -> HeaderAction {
    if (100..<200).contains(status) { return .proceed }
    if [301, 302, 303, 307, 308].contains(status), let location = headers.location {
      if rules.checksRedirectHosts, let refusal = ProxyPolicy.refusal(url: location) { return .fail(refusal) }
      if rules.checksRedirectTargets { return .redirect(location: location) }
      return .proceed  // libcurl follows it (and counts it against the redirect limit)
    }
    let head = ResponseHead(status: status, headers: headers)
    finalHead = head
    guard (200..<300).contains(status) || (status == 304 && rules.isConditional) else {
      return .fail(
        AttachmentError(
          .httpStatus, "The server answered HTTP \(status).", httpStatus: status,
          detected: headers.contentType))
    }
    if let offset = requestedOffset, status == 206 { return resumed(head, at: offset) }
    if let declared = headers.contentLength, declared > rules.maximumBodyBytes {
      return .fail(
        AttachmentError(
          .tooLarge, "The server declared \(declared) bytes, over the limit of \(rules.maximumBodyBytes).",
          httpStatus: status))
    }
    bodyRestarts = bodyBytes > 0
    bodyBytes = 0
    carriedBytes = 0
    bodyHead = head
    return .finalHead(head)
  }

  /// A `206` to a ranged attempt: acceptable when its `Content-Range` starts at `offset`, the
  /// byte the attempt asked for, and its total stays within the limit.
  private mutating func resumed(_ head: ResponseHead, at offset: Int64) -> HeaderAction {
    guard let range = ContentRange(head.headers["Content-Range"]), range.first == offset,
      range.first == bodyBytes, let bodyHead
    else {
      return .fail(
        AttachmentError(
          .networkError,
          "The server answered the resumed request from byte \(offset) with a different range.",
          httpStatus: head.status))
    }
    if let total = range.total, total > rules.maximumBodyBytes {
      return .fail(
        AttachmentError(
          .tooLarge, "The server declared \(total) bytes, over the limit of \(rules.maximumBodyBytes).",
          httpStatus: head.status))
    }
    carriedBytes = offset
    finalHead = head
    return .resumed(bodyHead)
  }

  /// Takes `count` more body bytes; returns the error that stops the transfer when they take
  /// the body past its limit, else `nil`.
  mutating func receiveBody(count: Int) -> AttachmentError? {
    bodyBytes += Int64(count)
    guard bodyBytes > rules.maximumBodyBytes else { return nil }
    return AttachmentError(
      .tooLarge, "The body grew past the limit of \(rules.maximumBodyBytes) bytes.",
      httpStatus: finalHead?.status)
  }

  /// Judges a transfer libcurl finished without error: the final head, and a body that is
  /// neither empty nor shorter or longer than declared (a `304` has none).
  /// A resumed body is judged against its `206`'s range, and answered with the head of the
  /// response its first bytes came from.
  func completed() -> Result<ResponseHead, AttachmentError> {
    guard let head = finalHead else {
      return .failure(AttachmentError(.networkError, "The server sent no complete response head."))
    }
    if head.status == 304 { return .success(head) }
    if bodyBytes == 0 {
      return .failure(AttachmentError(.empty, "The server sent an empty body.", httpStatus: head.status))
    }
    if let declared = head.headers.contentLength, declared != bodyBytes - carriedBytes {
      return .failure(
        AttachmentError(
          .truncated, "The server declared \(declared) bytes but sent \(bodyBytes - carriedBytes).",
          httpStatus: head.status)
      )
    }
    if carriedBytes > 0, let bodyHead {
      if let total = ContentRange(head.headers["Content-Range"])?.total, total != bodyBytes {
        return .failure(
          AttachmentError(
            .truncated, "The resumed body holds \(bodyBytes) bytes of \(total).", httpStatus: head.status))
      }
      return .success(bodyHead)
    }
    return .success(head)
  }

  /// The bytes a `206` resumed the body from (0 when it was not resumed).
  var resumedBytes: Int64 { carriedBytes }
}
