/// How many body bytes of an answer the client really received, for the access log.
///
/// An answer libmicrohttpd finished writing counts whole. One cut short (the client left, or
/// the connection watch cut it) counts what the client's TCP acknowledged after the answer was
/// queued, less the answer's head: the bytes of ours the socket held before this answer
/// (``TCPProgress/written`` then) are not this answer's, and the head's size is computed as
/// libmicrohttpd writes it (status line, `Date`, the headers, `Content-Length`), within the
/// length of a `Connection` line it may add.
enum DeliveredBytes {
  /// The body bytes delivered of an answer of `length` body bytes with `headBytes` of head,
  /// given the socket's `before` (at queueing) and `after` (at the end) progress.
  static func body(
    length: Int64, completed: Bool, headBytes: Int, before: TCPProgress?, after: TCPProgress?
  ) -> Int64 {
    if completed { return length }
    guard let before, let after, let written = before.written, after.acknowledged > written else { return 0 }
    let delivered = Int64(after.acknowledged - written) - Int64(headBytes)
    return min(max(0, delivered), length)
  }

  /// The size of the head libmicrohttpd writes for `status` with `headers` and a body of
  /// `length` bytes.
  static func head(status: Int, headers: [(String, String)], length: Int64) -> Int {
    let statusLine = "HTTP/1.1 \(status) \(reason(status))\r\n".utf8.count
    let date = "Date: Wed, 02 Dec 2026 02:30:00 GMT\r\n".utf8.count
    let fields = headers.reduce(0) { $0 + $1.0.utf8.count + 2 + $1.1.utf8.count + 2 }
    let contentLength = "Content-Length: \(length)\r\n".utf8.count
    return statusLine + date + fields + contentLength + 2
  }

  private static func reason(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 206: "Partial Content"
    case 304: "Not Modified"
    case 416: "Range Not Satisfiable"
    default: "Non-Standard Status"
    }
  }
}
