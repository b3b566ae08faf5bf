import CCurl

/// Setting up a transfer's libcurl easy handle: every option the engine relies on, in one place.
extension Transfer {
  /// Creates and configures the easy handle. Returns an error when libcurl refuses an option
  /// the engine cannot do without (the first one refused is named).
  func makeHandle(now: ContinuousClock.Instant) -> AttachmentError? {
    guard let easy = curl_easy_init() else {
      return AttachmentError(.networkError, "libcurl could not create a transfer handle.")
    }
    self.easy = easy
    return configure(easy, now: now)
  }

  /// Sets every option of the easy handle again (each replaces its earlier value; the handle
  /// keeps its connection cache), for the next attempt, with the time left to the deadline as
  /// of `now` and that attempt's request headers.
  func reconfigureHandle(now: ContinuousClock.Instant) -> AttachmentError? {
    guard let easy else { return AttachmentError(.networkError, "The transfer handle is gone.") }
    if let headerList {
      curl_slist_free_all(headerList)
      self.headerList = nil
    }
    return configure(easy, now: now)
  }

  private func configure(_ easy: UnsafeMutableRawPointer, now: ContinuousClock.Instant) -> AttachmentError? {
    let me = Unmanaged.passUnretained(self).toOpaque()
    var refused = RefusedOptions()
    setRequestOptions(easy, me: me, &refused)
    setLimitOptions(easy, now: now, &refused)
    setTLSOptions(easy, &refused)
    setConnectionOptions(easy, me: me, &refused)
    setHeaderOptions(easy, &refused)
    setCallbackOptions(easy, me: me, &refused)
    if let failure = refused.codes.first {
      let name = curlErrorText(failure)
      return AttachmentError(.networkError, "libcurl refused an option: \(name).")
    }
    return nil
  }

  /// The codes of the options libcurl refused, in the order they were set.
  private struct RefusedOptions {
    private(set) var codes: [CURLcode] = []

    /// Keeps `code` when it is not `CURLE_OK`.
    mutating func check(_ code: CURLcode) { if code != CURLE_OK { codes.append(code) } }
  }

  /// What to fetch and where it may lead: the URL, this transfer as the handle's private
  /// pointer, no signals, a quick exit, http and https only (redirects too), and the redirect
  /// limit.
  private func setRequestOptions(
    _ easy: UnsafeMutableRawPointer, me: UnsafeMutableRawPointer, _ refused: inout RefusedOptions
  ) {
    refused.check(ak_easy_setopt_string(easy, CURLOPT_URL, target))
    refused.check(ak_easy_setopt_pointer(easy, CURLOPT_PRIVATE, me))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_QUICK_EXIT, 1))
    refused.check(ak_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
    refused.check(ak_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_MAXREDIRS, remainingRedirects))
  }

  /// How long and how much at a time: the total and connect timeouts from the deadline as of
  /// `now`, the low-speed abort, and the receive buffer size.
  private func setLimitOptions(
    _ easy: UnsafeMutableRawPointer, now: ContinuousClock.Instant, _ refused: inout RefusedOptions
  ) {
    let remaining = Self.milliseconds(deadline - now)
    let connect = min(remaining, Self.milliseconds(configuration.connectTimeout))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, remaining))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connect))
    if let lowSpeed = configuration.lowSpeedLimit {
      let milliseconds = lowSpeed.window.millisecondsRoundedUp  // whole seconds, rounded up
      let seconds = max(1, Int(milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)))
      refused.check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond))
      refused.check(ak_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, seconds))
    }
    // No CURLOPT_MAXFILESIZE_LARGE: it fires on Content-Length before the status is known (a
    // 404 with a long body became too_large), and 7.88 ignores it without a length. The header
    // callback checks a declared length after the status; the write callback counts bytes.
    refused.check(ak_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, configuration.receiveBufferBytes))
  }

  /// TLS: the peer's certificate and host name verified, against the configured CA file when
  /// there is one.
  private func setTLSOptions(_ easy: UnsafeMutableRawPointer, _ refused: inout RefusedOptions) {
    refused.check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
    if let caFile = configuration.certificateAuthorityFile {
      refused.check(ak_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
    }
  }

  /// The connection: the user agent, the error buffer, TCP keep-alive, either the configured
  /// proxy or none, and every socket opened by the transfer itself (close-on-exec, and behind
  /// the address guard when private networks are not allowed and there is no proxy).
  private func setConnectionOptions(
    _ easy: UnsafeMutableRawPointer, me: UnsafeMutableRawPointer, _ refused: inout RefusedOptions
  ) {
    refused.check(ak_easy_setopt_string(easy, CURLOPT_USERAGENT, configuration.userAgent))
    refused.check(ak_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
    refused.check(ak_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
    // An explicit proxy or none at all: "" keeps libcurl from reading proxy variables from the
    // environment, which would route around the address guard.
    refused.check(ak_easy_setopt_string(easy, CURLOPT_PROXY, configuration.proxy?.url ?? ""))
    refused.check(ak_easy_setopt_opensocket_callback(easy, transferOpenSocketCallback))
    refused.check(ak_easy_setopt_pointer(easy, CURLOPT_OPENSOCKETDATA, me))
  }

  /// The request headers: identity encoding, the negotiated types, the validators of a
  /// revalidation, and the range of a resumed attempt (`If-Range` on the body's validator, so
  /// a changed entity comes whole); a line with CR or LF is left out.
  private func setHeaderOptions(_ easy: UnsafeMutableRawPointer, _ refused: inout RefusedOptions) {
    // Identity only: no Accept-Encoding from libcurl, so no unbounded decompression.
    var lines = ["Accept-Encoding: identity"]
    // The negotiated types: an empty setting removes libcurl's own `Accept: */*`.
    lines.append(configuration.accept.isEmpty ? "Accept:" : "Accept: \(configuration.accept)")
    if let etag = request.ifNoneMatch { lines.append("If-None-Match: \(etag)") }
    if let date = request.ifModifiedSince { lines.append("If-Modified-Since: \(date)") }
    if let resume {
      lines.append("Range: bytes=\(resume.offset)-")
      lines.append("If-Range: \(resume.ifRange)")
    }
    // This origin's own headers (credentials): libcurl sends them on every redirect it follows,
    // so a redirect to a URL that gets other ones is followed by the transfer (redirectHop).
    lines += configuration.originHeaders.lines(for: target)
    for line in lines where !line.contains("\r") && !line.contains("\n") {
      headerList = curl_slist_append(headerList, line)
    }
    refused.check(ak_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
  }

  /// The header and write callbacks, each called with this transfer.
  private func setCallbackOptions(
    _ easy: UnsafeMutableRawPointer, me: UnsafeMutableRawPointer, _ refused: inout RefusedOptions
  ) {
    refused.check(ak_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback))
    refused.check(ak_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, me))
    refused.check(ak_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback))
    refused.check(ak_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, me))
  }

  static func milliseconds(_ duration: Duration) -> Int {
    let ms = duration.millisecondsRoundedUp
    return max(1, Int(clamping: ms))
  }
}
