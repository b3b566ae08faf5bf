import CCurl
import Glibc

/// One request in flight: its easy handle, its body file, and what its callbacks have seen.
///
/// Everything but ``completion`` is touched only on the engine's thread (the callbacks run
/// there too), which is why the class can be `@unchecked Sendable`.
final class Transfer: @unchecked Sendable {
  let request: DownloadRequest
  let completion: TransferCompletion
  let deadline: ContinuousClock.Instant
  let temporaryFile: String
  /// Whether the transfer made ``temporaryFile`` (and so removes it on failure or a `304`).
  let ownsFile: Bool

  private(set) var easy: UnsafeMutableRawPointer?
  private let configuration: DownloaderConfiguration
  private let bodyLimit: Int64
  private var fileDescriptor: Int32
  private let hasher = SHA256Hasher()
  private var headerList: UnsafeMutablePointer<curl_slist>?
  private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

  // What the callbacks have seen.
  private var headerBytes = 0
  private var currentStatus = 0
  private var currentHeaders = ResponseHeaders()
  private var finalHead: ResponseHead?
  private var bodyBytes: Int64 = 0
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
    self.configuration = configuration
    self.deadline = deadline
    self.temporaryFile = temporaryFile
    self.ownsFile = ownsFile
    self.fileDescriptor = fileDescriptor
    self.completion = TransferCompletion(temporaryFile: ownsFile ? temporaryFile : nil)
    self.bodyLimit = min(request.maximumBodyBytes ?? .max, configuration.maximumBodyBytes)
    self.inspecting = request.inspector != nil
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
  }

  deinit {
    releaseResources()
    errorBuffer.deallocate()
  }

  /// Closes the file and frees the easy handle and header list. Idempotent; engine thread only.
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

  // MARK: - Setting up

  /// Creates and configures the easy handle. Returns an error when libcurl refuses an option
  /// the engine cannot do without.
  func makeHandle(now: ContinuousClock.Instant) -> AttachmentError? {
    guard let easy = curl_easy_init() else {
      return AttachmentError(.networkError, "libcurl could not create a transfer handle.")
    }
    self.easy = easy
    let remaining = Self.milliseconds(deadline - now)
    let connect = min(remaining, Self.milliseconds(configuration.connectTimeout))
    let me = Unmanaged.passUnretained(self).toOpaque()

    var failures: [CURLcode] = []
    func check(_ code: CURLcode) { if code != CURLE_OK { failures.append(code) } }

    check(ak_easy_setopt_string(easy, CURLOPT_URL, request.url))
    check(ak_easy_setopt_pointer(easy, CURLOPT_PRIVATE, me))
    check(ak_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
    check(ak_easy_setopt_long(easy, CURLOPT_QUICK_EXIT, 1))
    check(ak_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
    check(ak_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
    check(ak_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
    check(ak_easy_setopt_long(easy, CURLOPT_MAXREDIRS, configuration.maximumRedirects))
    check(ak_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, remaining))
    check(ak_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connect))
    if let lowSpeed = configuration.lowSpeedLimit {
      let seconds = max(1, Int((lowSpeed.window + .milliseconds(999)).components.seconds))
      check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond))
      check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, seconds))
    }
    if bodyLimit < .max {
      check(ak_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(bodyLimit)))
    }
    check(ak_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, configuration.receiveBufferBytes))
    check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
    check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
    if let caFile = configuration.certificateAuthorityFile {
      check(ak_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
    }
    check(ak_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent))
    check(ak_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
    check(ak_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
    if !configuration.allowPrivateNetworks {
      check(ak_easy_setopt_opensocket_callback(easy, transferOpenSocketCallback))
      check(ak_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, me))
    }

    // Identity only: no Accept-Encoding from libcurl, so no unbounded decompression.
    var lines = ["Accept-Encoding: identity"]
    if let etag = request.ifNoneMatch { lines.append("If-None-Match: \(etag)") }
    if let date = request.ifModifiedSince { lines.append("If-Modified-Since: \(date)") }
    for line in lines where !line.contains("\r") && !line.contains("\n") {
      headerList = curl_slist_append(headerList, line)
    }
    check(ak_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))

    check(ak_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback))
    check(ak_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me))
    check(ak_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback))
    check(ak_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me))

    if let failure = failures.first {
      let name = curlErrorText(failure)
      return AttachmentError(.networkError, "libcurl refused an option: \(name).")
    }
    return nil
  }

  private static func milliseconds(_ duration: Duration) -> Int {
    let (seconds, attoseconds) = duration.components
    let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return max(1, Int(clamping: ms))
  }

  // MARK: - Callbacks (engine thread; never throw, never trap)

  /// Opens a socket for libcurl unless the peer address is refused; returns -1 to refuse.
  func openSocket(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>) -> Int32 {
    let refusal = withUnsafeMutablePointer(to: &address.pointee.addr) { pointer in
      AddressPolicy.refusal(for: pointer)
    }
    if let refusal {
      blockedAddress = refusal
      return -1
    }
    return socket(
      address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue),
      address.pointee.protocol)
  }

  /// Takes one header line; returns false to stop the transfer.
  func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
    headerBytes += bytes.count
    if headerBytes > configuration.maximumHeaderBytes {
      return abort(
        AttachmentError(
          .headersTooLarge,
          "The response headers exceed \(configuration.maximumHeaderBytes) bytes."))
    }
    let line = HeaderLine(bytes)
    switch line {
    case .status(let status):
      currentStatus = status
      currentHeaders = ResponseHeaders()
    case .field(let name, let value):
      currentHeaders.append(name: name, value: value)
    case .end:
      return headersComplete()
    case .other:
      break
    }
    return true
  }

  private func headersComplete() -> Bool {
    let status = currentStatus
    if (100..<200).contains(status) { return true }
    if [301, 302, 303, 307, 308].contains(status), currentHeaders.location != nil {
      return true  // libcurl follows it (and counts it against the redirect limit)
    }
    let head = ResponseHead(status: status, headers: currentHeaders)
    finalHead = head
    let success = (200..<300).contains(status) || (status == 304 && request.isConditional)
    guard success else {
      return abort(
        AttachmentError(
          .httpStatus, "The server answered HTTP \(status).", httpStatus: status,
          detected: currentHeaders.contentType))
    }
    if let declared = currentHeaders.contentLength, declared > bodyLimit {
      return abort(
        AttachmentError(
          .tooLarge, "The server declared \(declared) bytes, over the limit of \(bodyLimit).",
          httpStatus: status))
    }
    if inspecting, status != 304, let inspector = request.inspector {
      switch inspector.inspect(head: head) {
      case .more: break
      case .enough: inspecting = false
      case .reject(let error): return abort(error)
      }
    }
    return true
  }

  /// Takes one chunk of the body; returns false to stop the transfer.
  func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
    if bytes.isEmpty { return true }
    let offset = bodyBytes
    bodyBytes += Int64(bytes.count)
    if bodyBytes > bodyLimit {
      return abort(
        AttachmentError(
          .tooLarge, "The body grew past the limit of \(bodyLimit) bytes.",
          httpStatus: finalHead?.status))
    }
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
    hasher.update(bytes)
    return true
  }

  private func abort(_ error: AttachmentError) -> Bool {
    if abortReason == nil { abortReason = error }
    return false
  }

  // MARK: - Finishing (engine thread)

  /// Builds the caller's answer once libcurl reports the transfer done with `code`.
  func outcome(code: CURLcode, now: ContinuousClock.Instant) -> Result<Download, AttachmentError> {
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
          for: code, detail: detail, bodyBytes: bodyBytes, deadlinePassed: now >= deadline))
    }
    guard let head = finalHead, let easy else {
      return .failure(AttachmentError(.networkError, "The server sent no complete response head."))
    }
    if head.status != 304 {
      if bodyBytes == 0 {
        return .failure(AttachmentError(.empty, "The server sent an empty body.", httpStatus: head.status))
      }
      if let declared = head.headers.contentLength, declared != bodyBytes {
        return .failure(
          AttachmentError(
            .truncated, "The server declared \(declared) bytes but sent \(bodyBytes).",
            httpStatus: head.status))
      }
    }
    if fileDescriptor >= 0 {
      let closed = close(fileDescriptor)
      fileDescriptor = -1
      if closed != 0 {
        return .failure(AttachmentError(.ioError, "Closing the body file failed."))
      }
    }
    let digest = head.status == 304 ? "" : (hasher.finalize() ?? "")
    if head.status != 304, digest.isEmpty {
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
        finalURL: effective.map { String(cString: $0) } ?? request.url,
        status: head.status,
        headers: head.headers,
        file: head.status == 304 ? nil : temporaryFile,
        bytesReceived: bodyBytes,
        sha256: digest,
        timings: timings(of: easy),
        redirectCount: redirects,
        peerAddressClass: PeerAddressClass.ofPrimaryIP(easy)))
  }

  private func timings(of easy: UnsafeMutableRawPointer) -> TransferTimings {
    func read(_ info: CURLINFO) -> Int64 {
      var value: curl_off_t = 0
      _ = ak_easy_getinfo_off_t(easy, info, &value)
      return Int64(value)
    }
    var timings = TransferTimings()
    timings.dnsMicroseconds = read(CURLINFO_NAMELOOKUP_TIME_T)
    timings.connectMicroseconds = read(CURLINFO_CONNECT_TIME_T)
    timings.tlsMicroseconds = read(CURLINFO_APPCONNECT_TIME_T)
    timings.firstByteMicroseconds = read(CURLINFO_STARTTRANSFER_TIME_T)
    timings.totalMicroseconds = read(CURLINFO_TOTAL_TIME_T)
    return timings
  }
}

// C callbacks: non-capturing, so they convert to C function pointers. The context is the
// transfer, passed unretained (the engine keeps it alive while its handle exists).

private func transferHeaderCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  deliver(pointer, size * count, to: context) { $0.receiveHeader($1) }
}

private func transferWriteCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  deliver(pointer, size * count, to: context) { $0.receiveBody($1) }
}

/// Hands a data callback's bytes to the transfer; returns what libcurl expects: the length
/// taken, or 0 to stop the transfer.
private func deliver(
  _ pointer: UnsafeMutablePointer<CChar>?, _ length: Int, to context: UnsafeMutableRawPointer?,
  _ take: (Transfer, UnsafeRawBufferPointer) -> Bool
) -> Int {
  guard let context else { return 0 }
  let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
  let bytes = UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : length)
  return take(transfer, bytes) ? length : 0
}

private func transferOpenSocketCallback(
  _ context: UnsafeMutableRawPointer?, _ purpose: curlsocktype,
  _ address: UnsafeMutablePointer<curl_sockaddr>?
) -> Int32 {
  guard let context, let address else { return -1 }
  let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
  return transfer.openSocket(purpose: purpose, address: address)
}
