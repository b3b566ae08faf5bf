import PosixLock

/// How a resumable route (``TestHTTPServer/serveResumable(_:body:contentType:behaviour:)``)
/// answers, and which faults it injects.
public struct ResumableBehaviour: Sendable {
  /// The entity tag sent (and matched against `If-Range`), or `nil` for none.
  public var etag: String? = "\"v1\""
  /// The `Last-Modified` sent (and matched against `If-Range`), or `nil` for none.
  public var lastModified: String? = nil
  /// Whether `Accept-Ranges: bytes` is sent and ranges are honoured.
  public var acceptsRanges = true
  /// Reset the connection (TCP RST) once this many body bytes of the first response were
  /// handed to the socket; `nil`: never.
  public var resetFirstResponseAfter: Int? = nil
  /// Whether that cut is a graceful close (FIN: every byte sent arrives, and the client sees a
  /// body shorter than declared) instead of a reset.
  public var cutsWithClose = false
  /// Answer a ranged request with `200` and the whole body, as an origin that ignores `Range`
  /// (it still advertises `Accept-Ranges`).
  public var ignoresRange = false

  /// The behaviour of a plain resumable resource with a strong ETag.
  public init() {}
}

extension TestHTTPServer {
  /// Serves `body` at `path` as a resource that can be fetched in ranges: `200` with
  /// `Content-Length` (and the behaviour's validators and `Accept-Ranges`), or, for a
  /// `Range: bytes=N-` whose `If-Range` (when sent) equals the ETag or `Last-Modified`,
  /// `206` with `Content-Range: bytes N-(len-1)/len`. The behaviour's faults are driven by the
  /// bytes sent, never by time. Requests are counted and recorded like any other route's.
  public func serveResumable(
    _ path: String, body: [UInt8], contentType: String = "application/octet-stream",
    behaviour: ResumableBehaviour = ResumableBehaviour()
  ) {
    let served = Locked(0)
    route(path) { request, writer in
      let index = served.withLock { count in
        defer { count += 1 }
        return count
      }
      var headers: [(String, String)] = [("Content-Type", contentType)]
      if let etag = behaviour.etag { headers.append(("ETag", etag)) }
      if let lastModified = behaviour.lastModified { headers.append(("Last-Modified", lastModified)) }
      if behaviour.acceptsRanges { headers.append(("Accept-Ranges", "bytes")) }
      var start = 0
      if behaviour.acceptsRanges, !behaviour.ignoresRange,
        let offset = Self.rangeStart(request, behaviour: behaviour), offset < body.count
      {
        start = offset
        headers.append(("Content-Range", "bytes \(offset)-\(body.count - 1)/\(body.count)"))
      }
      headers.append(("Content-Length", String(body.count - start)))
      guard writer.writeHead(status: start > 0 ? 206 : 200, headers: headers), !writer.isHeadRequest
      else { return }
      let resetAfter = index == 0 ? behaviour.resetFirstResponseAfter : nil
      var position = start
      while position < body.count {
        var end = min(body.count, position + 64 * 1024)
        if let resetAfter, position < resetAfter { end = min(end, resetAfter) }
        guard writer.write(Array(body[position..<end])) else { return }
        position = end
        if let resetAfter, position >= resetAfter {
          if behaviour.cutsWithClose { writer.closeConnection() } else { writer.resetConnection() }
          return
        }
      }
    }
  }

  /// The N of a `Range: bytes=N-` that the request's `If-Range` (when sent) allows.
  private static func rangeStart(_ request: RecordedRequest, behaviour: ResumableBehaviour) -> Int? {
    guard let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
      let offset = Int(range.dropFirst("bytes=".count).dropLast())
    else { return nil }
    if let ifRange = request.header("If-Range") {
      guard ifRange == behaviour.etag || ifRange == behaviour.lastModified else { return nil }
    }
    return offset
  }

  /// Answers the first `failures.count` requests for `path` with those statuses, each with its
  /// `Retry-After` when given (and a small HTML body), then serves `body` with `200` and
  /// `Content-Length` to every later one.
  public func serveAfterFailures(
    _ path: String, failures: [(status: Int, retryAfter: String?)], body: [UInt8],
    contentType: String = "application/octet-stream"
  ) {
    let served = Locked(0)
    route(path) { _, writer in
      let index = served.withLock { count in
        defer { count += 1 }
        return count
      }
      guard index >= failures.count else {
        let failure = failures[index]
        var headers = [("Content-Type", "text/html")]
        if let retryAfter = failure.retryAfter { headers.append(("Retry-After", retryAfter)) }
        writer.respond(status: failure.status, headers: headers, body: HTTPStatus.htmlPage(failure.status))
        return
      }
      writer.respond(status: 200, headers: [("Content-Type", contentType)], body: body)
    }
  }
}
