import CCurl

/// Turns a libcurl result code into the library's error, given what the transfer knows.
enum CurlCodeMapping {
  /// The error for a transfer that ended with `code`.
  ///
  /// - Parameters:
  ///   - code: libcurl's result.
  ///   - detail: the text of libcurl's error buffer (may be empty).
  ///   - bodyBytes: body bytes received before the failure.
  ///   - deadlinePassed: whether the caller's deadline had passed when the transfer ended.
  /// - Returns: the error the caller gets, with its stable code.
  static func error(
    for code: CURLcode, detail: String, bodyBytes: Int64, deadlinePassed: Bool
  ) -> AttachmentError {
    // libcurl's text can quote the server (a redirect's scheme, a bad status line): escape it.
    let suffix = detail.isEmpty ? "" : " (\(Redaction.escapeControlCharacters(detail)))"
    switch code {
    case CURLE_UNSUPPORTED_PROTOCOL:
      return AttachmentError(
        .unsupportedScheme, "A redirect led to a scheme other than http or https\(suffix).")
    case CURLE_URL_MALFORMAT:
      return AttachmentError(.invalidURL, "The URL is malformed\(suffix).")
    case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
      return AttachmentError(.dnsFailed, "The host name could not be resolved\(suffix).")
    case CURLE_COULDNT_CONNECT:
      return AttachmentError(.connectFailed, "Could not connect to the server\(suffix).")
    case CURLE_OPERATION_TIMEDOUT:
      if detail.hasPrefix("Operation too slow") {
        return AttachmentError(.tooSlow, "The transfer was slower than the low-speed limit\(suffix).")
      }
      if !deadlinePassed, detail.hasPrefix("Connection timed out") {
        return AttachmentError(.connectFailed, "Connecting took longer than the connect timeout\(suffix).")
      }
      if !deadlinePassed, detail.hasPrefix("Resolving timed out") {
        return AttachmentError(.dnsFailed, "Resolving the host name timed out\(suffix).")
      }
      return AttachmentError(.deadlineExceeded, "The deadline passed before the download finished.")
    case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
      CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
      CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CIPHER, CURLE_SSL_CRL_BADFILE:
      return AttachmentError(.tlsFailed, "The TLS handshake failed\(suffix).")
    case CURLE_TOO_MANY_REDIRECTS:
      return AttachmentError(.tooManyRedirects, "Too many redirects\(suffix).")
    case CURLE_FILESIZE_EXCEEDED:
      return AttachmentError(.tooLarge, "The body is larger than the limit\(suffix).")
    case CURLE_PARTIAL_FILE:
      return AttachmentError(
        .truncated, "The connection closed before the whole body arrived (\(bodyBytes) bytes received).")
    case CURLE_RECV_ERROR where bodyBytes > 0:
      return AttachmentError(
        .truncated, "The connection failed mid-body after \(bodyBytes) bytes\(suffix).")
    case CURLE_WRITE_ERROR:
      return AttachmentError(.ioError, "Writing the body failed\(suffix).")
    case CURLE_ABORTED_BY_CALLBACK:
      return AttachmentError(.cancelled, "The transfer was stopped\(suffix).")
    case CURLE_GOT_NOTHING:
      return AttachmentError(.networkError, "The server closed the connection without answering.")
    default:
      let name = curlErrorText(code)
      return AttachmentError(.networkError, "The transfer failed: \(name)\(suffix).")
    }
  }
}
