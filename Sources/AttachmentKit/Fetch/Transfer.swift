import CCurl
import Glibc

/// One request in flight: its easy handle, its body file, and what its callbacks have seen.
///
/// The caller makes and configures it (``makeHandle(now:)``) before handing it to the engine;
/// from then on everything but ``completion`` is touched only on the engine's thread (the
/// callbacks run there too), which is why the class can be `@unchecked Sendable`. Its HTTP
/// rules live in ``ResponseStateMachine``; its libcurl options in `TransferSetup.swift`.
final class Transfer: @unchecked Sendable {
  let request: DownloadRequest
  let completion: TransferCompletion
  let deadline: ContinuousClock.Instant
  let temporaryFile: String
  /// Whether the transfer made ``temporaryFile`` (and so removes it on failure or a `304`).
  let ownsFile: Bool

  var easy: UnsafeMutableRawPointer?
  /// The TLS of the final response's connection, read when its head arrived.
  private var tls: TLSFacts?
  let configuration: DownloaderConfiguration
  /// The addresses the address guard lets through, or `nil` when no guard applies (private
  /// networks allowed, or a proxy, whose address the guard cannot judge).
  private let guardedAddresses: Set<[UInt8]>?
  private var fileDescriptor: Int32
  /// Where the body starts in the file: the descriptor's offset when the transfer took it.
  private let bodyStart: off_t
  private var digest: BodyDigest
  /// How many attempts were started, the first included (see ``RetryPolicy``).
  private(set) var attempts = 1
  /// The range the current attempt asks for, when it resumes a body.
  private(set) var resume: RetryPolicy.Resume?
  /// The body bytes the last ranged attempt did not have to fetch again (0 without one).
  private var resumedBytes: Int64 = 0
  /// The URL the current attempt starts at: the request's, or where a redirect that needs
  /// other origin headers led (``redirectHop``).
  private(set) var target: String
  /// A redirect the transfer follows itself, with the headers of the origin it leads to,
  /// because libcurl would send it the current origin's (see ``OriginHeaders``).
  private(set) var redirectHop: String?
  /// Redirects followed by earlier hops, each hop included.
  private var hoppedRedirects = 0
  var headerList: UnsafeMutablePointer<curl_slist>?
  let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

  // What the callbacks have seen.
  private var response: ResponseStateMachine
  private var inspecting: Bool
  /// Why a callback stopped the transfer, when it did.
  private(set) var abortReason: AttachmentError?
  /// The last peer address the address policy refused (libcurl may then try another).
  private var blockedAddress: String?

  /// Makes a transfer whose body is written to the already open `fileDescriptor` at
  /// `temporaryFile`. The transfer owns the descriptor from now on, and the file itself when
  /// `ownsFile` (otherwise the caller who made it removes it).
  init(
    request: DownloadRequest, configuration: DownloaderConfiguration,
    deadline: ContinuousClock.Instant, temporaryFile: String, fileDescriptor: Int32, ownsFile: Bool = true
  ) {
    self.request = request
    self.target = request.url
    self.configuration = configuration
    self.deadline = deadline
    self.temporaryFile = temporaryFile
    self.ownsFile = ownsFile
    self.fileDescriptor = fileDescriptor
    self.bodyStart = max(0, lseek(fileDescriptor, 0, SEEK_CUR))
    self.digest = BodyDigest(
      writer: fileDescriptor, leavingSmallBodyToCaller: request.leavesSmallBodyDigestToCaller)
    self.completion = TransferCompletion(temporaryFile: ownsFile ? temporaryFile : nil)
    self.response = ResponseStateMachine(
      rules: .init(
        maximumBodyBytes: min(request.maximumBodyBytes ?? .max, configuration.maximumBodyBytes),
        maximumHeaderBytes: configuration.maximumHeaderBytes, isConditional: request.isConditional,
        checksRedirectHosts: ProxyPolicy.checksHosts(configuration),
        checksRedirectTargets: !configuration.allowedOrigins.isEmpty || !configuration.originHeaders.isEmpty))
    self.guardedAddresses =
      configuration.allowPrivateNetworks || configuration.proxy != nil
      ? nil : AddressPolicy.addresses(configuration.allowedAddresses)
    self.inspecting = request.inspector != nil
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
  }

  deinit {
    releaseResources()
    errorBuffer.deallocate()
  }

  /// Closes the file and frees the easy handle and header list. Idempotent; called by the
  /// engine once the transfer was submitted, or by the caller when set-up failed before that.
  func releaseResources() {
    if fileDescriptor >= 0 {
      close(fileDescriptor)
      fileDescriptor = -1
    }
    if let easy {
      curl_easy_cleanup(easy)
      self.easy = nil
    }
    if let headerList {
      curl_slist_free_all(headerList)
      self.headerList = nil
    }
  }

  // MARK: - Callbacks (engine thread; never throw, never trap)

  /// Opens every socket of the transfer, close-on-exec (libcurl 7.88's own are not, so a child
  /// process started meanwhile would hold the connection open after libcurl closes it), unless
  /// the address guard refuses the peer; returns -1 to refuse.
  func openSocket(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>) -> Int32 {
    if let guardedAddresses {
      let refusal = withUnsafeMutablePointer(to: &address.pointee.addr) { pointer in
        AddressPolicy.refusal(for: pointer, allowed: guardedAddresses)
      }
      if let refusal {
        blockedAddress = refusal.reason
        return -1
      }
    }
    return socket(
      address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue),
      address.pointee.protocol)
  }

  /// Takes one header line; returns false to stop the transfer.
  func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
    switch response.receive(HeaderLine(bytes), byteCount: bytes.count) {
    case .proceed:
      return true
    case .redirect(let location):
      // Resolved as libcurl will resolve it, against the URL this response answered.
      var current: UnsafeMutablePointer<CChar>?
      _ = ak_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &current)
      let base = current.map { String(cString: $0) } ?? request.url
      let next = curlResolve(location, against: base) ?? location
      let allowlist = configuration.allowedOrigins
      guard allowlist.allows(next) else { return abort(allowlist.refusal(next, redirect: true)) }
      let headers = configuration.originHeaders
      guard headers.lines(for: next) != headers.lines(for: base) else { return true }
      // libcurl would send this origin's headers to the next: stop, and go there anew.
      redirectHop = next
      return abort(AttachmentError(.networkError, "A redirect needs other origin headers."))
    case .fail(let error):
      return abort(error)
    case .resumed:
      // The bytes continue the body the inspector and the digest have been reading.
      resumedBytes = resume?.offset ?? 0
      return true
    case .finalHead(let head):
      // The connection is open now (after the transfer libcurl may have closed it).
      if tls == nil { tls = TLSFacts.read(easy) }
      if response.bodyRestarts, let error = restartBody() { return abort(error) }
      guard inspecting, head.status != 304, let inspector = request.inspector else { return true }
      switch inspector.inspect(head: head) {
      case .more: return true
      case .enough:
        inspecting = false
        return true
      case .reject(let error): return abort(error)
      }
    }
  }

  /// Takes one chunk of the body; returns false to stop the transfer.
  func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
    if bytes.isEmpty { return true }
    let offset = response.bodyBytes
    request.receivedBytes?.add(bytes.count)
    if let error = response.receiveBody(count: bytes.count) { return abort(error) }
    if inspecting, let inspector = request.inspector {
      switch inspector.inspect(body: bytes, at: offset) {
      case .more: break
      case .enough: inspecting = false
      case .reject(let error): return abort(error)
      }
    }
    guard let base = bytes.baseAddress else { return true }
    var written = 0
    while written < bytes.count {
      let result = write(fileDescriptor, base + written, bytes.count - written)
      if result < 0 {
        if errno == EINTR { continue }
        let reason = String(cString: strerror(errno))
        return abort(AttachmentError(.ioError, "Writing the body to disk failed: \(reason)."))
      }
      written += result
    }
    digest.append(bytes, writtenTotal: response.bodyBytes)
    return true
  }

  /// Drops the body of an earlier attempt, so that a new one starts the file, the digest and
  /// the inspector over from its first byte; returns why it could not.
  private func restartBody() -> AttachmentError? {
    guard ftruncate(fileDescriptor, bodyStart) == 0, lseek(fileDescriptor, bodyStart, SEEK_SET) == bodyStart
    else {
      let reason = String(cString: strerror(errno))
      return AttachmentError(.ioError, "Starting the body over failed: \(reason).")
    }
    digest = BodyDigest(
      writer: fileDescriptor, leavingSmallBodyToCaller: request.leavesSmallBodyDigestToCaller)
    request.inspector?.restart()
    inspecting = request.inspector != nil
    resumedBytes = 0
    return nil
  }

  private func abort(_ error: AttachmentError) -> Bool {
    if abortReason == nil { abortReason = error }
    return false
  }

  // MARK: - Retrying (engine thread)

  /// What the attempt that libcurl ended with `code` ended with, as ``RetryPolicy`` sees it.
  func retryCause(code: CURLcode) -> RetryPolicy.Cause {
    if let abortReason {
      guard abortReason.code == .httpStatus, let status = abortReason.httpStatus, (502...504).contains(status)
      else { return .final }
      return .unavailable(status: status, retryAfter: response.finalHead?.headers["Retry-After"])
    }
    if blockedAddress != nil { return .final }
    switch code {
    case CURLE_COULDNT_CONNECT, CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR:
      return .connection
    default:
      return .final
    }
  }

  /// What ``RetryPolicy`` decides after the attempt that libcurl ended with `code`.
  func retryDecision(code: CURLcode, now: ContinuousClock.Instant) -> RetryPolicy.Decision {
    RetryPolicy(retries: configuration.retries).decide(
      after: retryCause(code: code), attempts: attempts, bodyBytes: response.bodyBytes,
      bodyHead: response.bodyHead?.headers, now: now, deadline: deadline, wallClock: FileSystem.now())
  }

  /// Makes the handle ready for another attempt, from the first byte or resuming at `resume`;
  /// returns the error when libcurl refuses an option. The body file, digest and inspector
  /// keep what they have: a resumed body continues them, any other restarts them when its
  /// head arrives.
  func prepareRetry(resume: RetryPolicy.Resume?, now: ContinuousClock.Instant) -> AttachmentError? {
    attempts += 1
    self.resume = resume
    abortReason = nil
    blockedAddress = nil
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    response.beginAttempt(resumingAt: resume?.offset)
    return reconfigureHandle(now: now)
  }

  /// Makes the handle ready to request the pending ``redirectHop`` with its own origin
  /// headers; returns the error when that passes the redirect limit or libcurl refuses an
  /// option.
  func prepareRedirectHop(now: ContinuousClock.Instant) -> AttachmentError? {
    guard let next = redirectHop else { return nil }
    var followed = 0
    _ = ak_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &followed)
    hoppedRedirects += followed + 1
    guard hoppedRedirects <= configuration.maximumRedirects else {
      return AttachmentError(.tooManyRedirects, "Too many redirects (\(hoppedRedirects)).")
    }
    target = next
    redirectHop = nil
    abortReason = nil
    blockedAddress = nil
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    response.beginAttempt(resumingAt: nil)
    return reconfigureHandle(now: now)
  }

  /// The redirect limit of the current attempt: what earlier hops left of the configured one.
  var remainingRedirects: Int { max(0, configuration.maximumRedirects - hoppedRedirects) }

  // MARK: - Finishing (engine thread)

  /// Builds the caller's answer once libcurl reports the transfer done with `code`.
  func outcome(code: CURLcode, now: ContinuousClock.Instant) -> Result<Download, AttachmentError> {
    finished(code: code, now: now).mapError { error in
      var error = error
      if response.bodyBytes > 0 { error.bytesReceived = response.bodyBytes }
      return error
    }
  }

  /// ``outcome(code:now:)`` before the bytes received are noted on a failure.
  private func finished(code: CURLcode, now: ContinuousClock.Instant) -> Result<Download, AttachmentError> {
    if let abortReason { return .failure(abortReason) }
    if let blockedAddress, code == CURLE_COULDNT_CONNECT {
      return .failure(
        AttachmentError(
          .blockedAddress,
          "The URL leads to \(blockedAddress); private networks are not allowed (see allowPrivateNetworks)."))
    }
    guard code == CURLE_OK else {
      let detail = String(cString: errorBuffer)
      return .failure(
        CurlCodeMapping.error(
          for: code, detail: detail, bodyBytes: response.bodyBytes, deadlinePassed: now >= deadline))
    }
    let head: ResponseHead
    switch response.completed() {
    case .success(let complete): head = complete
    case .failure(let error): return .failure(error)
    }
    guard let easy else {
      return .failure(AttachmentError(.networkError, "The transfer handle is gone."))
    }
    if fileDescriptor >= 0 {
      let closed = close(fileDescriptor)
      fileDescriptor = -1
      if closed != 0 {
        return .failure(AttachmentError(.ioError, "Closing the body file failed."))
      }
    }
    let bodyDigest: Download.Digest
    if head.status == 304 {
      bodyDigest = .noBody
    } else if digest.isLeftToCaller {
      bodyDigest = .deferred
    } else if let hex = digest.finalize(total: response.bodyBytes) {
      bodyDigest = .computed(hex)
    } else {
      return .failure(AttachmentError(.ioError, "Hashing the body failed in libcrypto."))
    }
    var effective: UnsafeMutablePointer<CChar>?
    _ = ak_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
    var redirects = 0
    _ = ak_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &redirects)
    if head.status == 304, ownsFile { unlink(temporaryFile) }
    return .success(
      Download(
        url: request.url,
        finalURL: effective.map { String(cString: $0) } ?? target,
        status: head.status,
        headers: head.headers,
        file: head.status == 304 ? nil : temporaryFile,
        bytesReceived: response.bodyBytes,
        digest: bodyDigest,
        timings: timings(of: easy),
        redirectCount: hoppedRedirects + redirects,
        peerAddressClass: PeerAddressClass.ofPrimaryIP(easy), tls: tls))
  }

  private func timings(of easy: UnsafeMutableRawPointer) -> TransferTimings {
    func read(_ info: CURLINFO) -> Int64 {
      var value: curl_off_t = 0
      _ = ak_easy_getinfo_off_t(easy, info, &value)
      return Int64(value)
    }
    var timings = TransferTimings()
    timings.attempts = attempts
    timings.resumedBytes = resumedBytes
    timings.dnsMicroseconds = read(CURLINFO_NAMELOOKUP_TIME_T)
    timings.connectMicroseconds = read(CURLINFO_CONNECT_TIME_T)
    timings.tlsMicroseconds = read(CURLINFO_APPCONNECT_TIME_T)
    timings.firstByteMicroseconds = read(CURLINFO_STARTTRANSFER_TIME_T)
    timings.totalMicroseconds = read(CURLINFO_TOTAL_TIME_T)
    return timings
  }
}
