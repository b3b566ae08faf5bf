import CCurl

/// Setting up a transfer's libcurl easy handle: every option the engine relies on, in one place.
extension Transfer {
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
      let milliseconds = lowSpeed.window.millisecondsRoundedUp  // whole seconds, rounded up
      let seconds = max(1, Int(milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)))
      check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond))
      check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, seconds))
    }
    // No CURLOPT_MAXFILESIZE_LARGE: it fires on Content-Length before the status is known (a
    // 404 with a long body became too_large), and 7.88 ignores it without a length. The header
    // callback checks a declared length after the status; the write callback counts bytes.
    check(ak_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, configuration.receiveBufferBytes))
    check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
    check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
    if let caFile = configuration.certificateAuthorityFile {
      check(ak_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
    }
    check(ak_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent))
    check(ak_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
    check(ak_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
    // An explicit proxy or none at all: "" keeps libcurl from reading proxy variables from the
    // environment, which would route around the address guard.
    check(ak_easy_setopt_string(easy, CURLOPT_PROXY, configuration.proxy?.url ?? ""))
    if !configuration.allowPrivateNetworks && configuration.proxy == nil {
      check(ak_easy_setopt_opensocket_callback(easy, transferOpenSocketCallback))
      check(ak_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, me))
    }

    // Identity only: no Accept-Encoding from libcurl, so no unbounded decompression.
    var lines = ["Accept-Encoding: identity"]
    // The negotiated types: an empty setting removes libcurl's own `Accept: */*`.
    lines.append(configuration.accept.isEmpty ? "Accept:" : "Accept: \(configuration.accept)")
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

  static func milliseconds(_ duration: Duration) -> Int {
    let ms = duration.millisecondsRoundedUp
    return max(1, Int(clamping: ms))
  }
}
