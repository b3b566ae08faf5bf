/// Reason phrases and small HTML bodies for HTTP status codes.
enum HTTPStatus {
  /// The standard reason phrase for `status`, or `"Status"` when unknown.
  static func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 101: "Switching Protocols"
    case 103: "Early Hints"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 206: "Partial Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 410: "Gone"
    case 413: "Content Too Large"
    case 416: "Range Not Satisfiable"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status"
    }
  }

  /// `<html><body>REASON</body></html>`-style page for `status`, padded with filler
  /// text to at least `paddedTo` bytes.
  static func htmlPage(_ status: Int, paddedTo minimum: Int = 0) -> [UInt8] {
    let reason = reasonPhrase(status)
    let head = "<html><head><title>\(status) \(reason)</title></head><body><h1>\(reason)</h1>\n"
    let tail = "</body></html>\n"
    var filler = ""
    let line = "<p>This is filler text so the error page is not tiny.</p>\n"
    while head.utf8.count + filler.utf8.count + tail.utf8.count < minimum {
      filler += line
    }
    return Array((head + filler + tail).utf8)
  }
}
