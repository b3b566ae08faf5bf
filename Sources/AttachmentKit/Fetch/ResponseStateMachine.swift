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
    /// The final response's head is complete and acceptable; its body comes next.
    case finalHead(ResponseHead)
    /// Stop the transfer with this error.
    case fail(AttachmentError)
  }

  private let rules: Rules
  private var headerBytes = 0
  private var status = 0
  private var headers = ResponseHeaders()
  /// The final response's head, once it is complete.
  private(set) var finalHead: ResponseHead?
  /// Body bytes accepted so far.
  private(set) var bodyBytes: Int64 = 0

  /// Starts with no response seen.
  init(rules: Rules) {
    self.rules = rules
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
    if let declared = headers.contentLength, declared > rules.maximumBodyBytes {
      return .fail(
        AttachmentError(
          .tooLarge, "The server declared \(declared) bytes, over the limit of \(rules.maximumBodyBytes).",
          httpStatus: status))
    }
    return .finalHead(head)
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
  func completed() -> Result<ResponseHead, AttachmentError> {
    guard let head = finalHead else {
      return .failure(AttachmentError(.networkError, "The server sent no complete response head."))
    }
    if head.status == 304 { return .success(head) }
    if bodyBytes == 0 {
      return .failure(AttachmentError(.empty, "The server sent an empty body.", httpStatus: head.status))
    }
    if let declared = head.headers.contentLength, declared != bodyBytes {
      return .failure(
        AttachmentError(
          .truncated, "The server declared \(declared) bytes but sent \(bodyBytes).", httpStatus: head.status)
      )
    }
    return .success(head)
  }
}
