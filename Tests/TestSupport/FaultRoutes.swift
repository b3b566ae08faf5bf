/// Built-in fault routes, registered by `TestHTTPServer.start()` (a later `route`,
/// `serve`… for the same path replaces them).
///
/// | Route                        | Behaviour                                                               |
/// |------------------------------|-------------------------------------------------------------------------|
/// | `/fault/never`               | Reads the request, never answers; holds the connection until the client |
/// |                              | closes or `stop()`.                                                     |
/// | `/fault/trickle`             | `200`, `Content-Length: 1000`, `Content-Type: image/jpeg`, then one     |
/// |                              | byte every 200 ms (~200 s in all) until the client leaves.              |
/// | `/fault/close-mid-body`      | `200`, `Content-Length: 100000`, 50 000 bytes, then close (FIN).        |
/// | `/fault/short-body`          | `200`, `Content-Length: 2000`, 1000 bytes, then close (FIN).            |
/// | `/fault/redirect-self`       | `302`, `Location: /fault/redirect-self` (an endless loop).              |
/// | `/fault/redirect-file`       | `302`, `Location: file:///etc/passwd`.                                  |
/// | `/fault/redirect-ftp`        | `302`, `Location: ftp://127.0.0.1/x`.                                   |
/// | `/redirect/N/REST…`          | `302` to `/redirect/(N-1)/REST…` while N > 0, to `/REST…` at 0: N+1     |
/// |                              | redirects in all; query kept; N not a number ≥ 0 → `400`.               |
/// | `/fault/chunked-forever`     | `200`, `Transfer-Encoding: chunked`, 16 KiB chunks as fast as the       |
/// |                              | client reads until it leaves (hard cap 2 GiB, then the last chunk).     |
/// | `/fault/huge-length`         | `200`, `Content-Length: 1000000000000`, then 16 KiB every 50 ms until   |
/// |                              | the client leaves.                                                      |
/// | `/status/CODE`               | Status CODE (200…599), `Content-Type: text/html`, ~2 KB HTML body (204  |
/// |                              | and 304 bodiless); other CODE → `400`.                                  |
/// | `/fault/empty`               | `200`, `Content-Length: 0`.                                             |
/// | `/fault/gzip`                | `200`, `Content-Encoding: gzip`, `Content-Type: text/plain`, body       |
/// |                              | `TestHTTPServer.gzipBody` (decodes to `gzipPlainText`).                 |
/// | `/fault/huge-headers`        | `200` with ~2 MiB of `X-Filler-N: <100 chars>` header lines, then a     |
/// |                              | small text body.                                                        |
/// | `/fault/not-modified-always` | Always `304 Not Modified` (`ETag: "always"`), whatever was sent.        |
/// | `/fault/slow-headers`        | Waits 1.5 s before sending anything, then `200` with a small body.      |
///
/// Bodies of the byte-sending faults are `TestHTTPServer.patternBytes(count:offset:)`
/// at their offset in the body, so a test can check what it did receive. All routes
/// answer HEAD with the head only.
enum FaultRoutes {
  /// Registers every fault route on `core`.
  static func register(on core: ServerCore) {
    core.setRoute("/fault/never") { _, writer in writer.waitForClientToClose() }
    core.setRoute("/fault/trickle", trickle)
    core.setRoute("/fault/close-mid-body") { _, writer in
      truncated(writer, declared: 100_000, sent: 50_000)
    }
    core.setRoute("/fault/short-body") { _, writer in truncated(writer, declared: 2000, sent: 1000) }
    core.setRoute("/fault/redirect-self") { _, writer in redirect(writer, to: "/fault/redirect-self") }
    core.setRoute("/fault/redirect-file") { _, writer in redirect(writer, to: "file:///etc/passwd") }
    core.setRoute("/fault/redirect-ftp") { _, writer in redirect(writer, to: "ftp://127.0.0.1/x") }
    core.setPrefixRoute("/redirect/", redirectChain)
    core.setRoute("/fault/chunked-forever", chunkedForever)
    core.setRoute("/fault/huge-length", hugeLength)
    core.setPrefixRoute("/status/", status)
    core.setRoute("/fault/empty") { _, writer in
      writer.respond(status: 200, headers: [("Content-Type", "application/octet-stream")])
    }
    core.setRoute("/fault/gzip") { _, writer in
      writer.respond(
        status: 200,
        headers: [("Content-Type", "text/plain; charset=utf-8"), ("Content-Encoding", "gzip")],
        body: TestHTTPServer.gzipBody)
    }
    core.setRoute("/fault/huge-headers", hugeHeaders)
    core.setRoute("/fault/not-modified-always") { _, writer in
      writer.writeHead(status: 304, headers: [("ETag", "\"always\""), ("Cache-Control", "max-age=0")])
    }
    core.setRoute("/fault/slow-headers") { _, writer in
      guard writer.sleep(milliseconds: 1500) else { return }
      writer.respond(
        status: 200, headers: [("Content-Type", "text/plain")], body: Array("slow headers done\n".utf8))
    }
  }

  private static func trickle(_ request: RecordedRequest, _ writer: ResponseWriter) {
    let body = TestHTTPServer.patternBytes(count: 1000)
    guard
      writer.writeHead(
        status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", "1000")]),
      !writer.isHeadRequest
    else { return }
    for (index, byte) in body.enumerated() {
      if index > 0 && !writer.sleep(milliseconds: 200) { return }
      if !writer.write([byte]) { return }
    }
  }

  private static func truncated(_ writer: ResponseWriter, declared: Int, sent: Int) {
    guard
      writer.writeHead(
        status: 200,
        headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(declared))]),
      !writer.isHeadRequest
    else { return }
    writer.write(TestHTTPServer.patternBytes(count: sent))
    writer.closeConnection()
  }

  private static func redirect(_ writer: ResponseWriter, to location: String) {
    writer.respond(status: 302, headers: [("Location", location)])
  }

  private static func redirectChain(_ request: RecordedRequest, _ writer: ResponseWriter) {
    let rest = request.path.dropFirst("/redirect/".count)
    let countText = rest.prefix { $0 != "/" }
    let tail = rest.dropFirst(countText.count + 1)
    guard let count = Int(countText), count >= 0 else {
      writer.respond(status: 400, headers: [("Content-Type", "text/html")], body: HTTPStatus.htmlPage(400))
      return
    }
    let next = count > 0 ? "/redirect/\(count - 1)/\(tail)" : "/\(tail)"
    redirect(writer, to: request.query.map { "\(next)?\($0)" } ?? next)
  }

  private static func chunkedForever(_ request: RecordedRequest, _ writer: ResponseWriter) {
    guard
      writer.writeHead(
        status: 200,
        headers: [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]),
      !writer.isHeadRequest
    else { return }
    let chunks = framedPatternChunks
    var sent = 0
    while sent < 2 << 30 {
      guard writer.write(chunks[(sent / patternChunkSize) % chunks.count]) else { return }
      sent += patternChunkSize
    }
    writer.finishChunks()
  }

  /// Size of the chunks sent by the endless faults.
  private static let patternChunkSize = 16 * 1024

  /// The pattern period split into 16 KiB pieces, each framed as one HTTP chunk.
  private static let framedPatternChunks: [[UInt8]] = stride(
    from: 0, to: TestHTTPServer.patternPeriod, by: patternChunkSize
  ).map { offset in
    Array("4000\r\n".utf8) + TestHTTPServer.patternBytes(count: patternChunkSize, offset: offset)
      + [0x0D, 0x0A]
  }

  private static func hugeLength(_ request: RecordedRequest, _ writer: ResponseWriter) {
    guard
      writer.writeHead(
        status: 200,
        headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "1000000000000")]),
      !writer.isHeadRequest
    else { return }
    var sent = 0
    while writer.write(TestHTTPServer.patternBytes(count: patternChunkSize, offset: sent)) {
      sent += patternChunkSize
      guard writer.sleep(milliseconds: 50) else { return }
    }
  }

  private static func status(_ request: RecordedRequest, _ writer: ResponseWriter) {
    let codeText = request.path.dropFirst("/status/".count).prefix { $0 != "/" }
    guard let code = Int(codeText), (200...599).contains(code) else {
      writer.respond(status: 400, headers: [("Content-Type", "text/html")], body: HTTPStatus.htmlPage(400))
      return
    }
    if code == 204 || code == 304 {
      writer.writeHead(status: code)
      return
    }
    writer.respond(
      status: code, headers: [("Content-Type", "text/html")],
      body: HTTPStatus.htmlPage(code, paddedTo: 2048))
  }

  private static func hugeHeaders(_ request: RecordedRequest, _ writer: ResponseWriter) {
    let filler = String(repeating: "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN", count: 2)
    let body = Array("huge headers done\n".utf8)
    var headers: [(String, String)] = [
      ("Content-Type", "text/plain"), ("Content-Length", String(body.count)),
    ]
    var total = 0
    var index = 0
    while total < 2 << 20 {
      let name = "X-Filler-\(index)"
      headers.append((name, filler))
      total += name.utf8.count + filler.utf8.count + 4
      index += 1
    }
    guard writer.writeHead(status: 200, headers: headers) else { return }
    writer.write(body)
  }
}

extension TestHTTPServer {
  /// The text `/fault/gzip` sends compressed: 1500 numbered lines (~90 KB, so the gzip
  /// member has two stored blocks).
  public static let gzipPlainText: [UInt8] = Array(
    (1...1500).map { "Line \($0): The quick brown fox jumps over the lazy dog.\n" }.joined().utf8)

  /// The exact bytes `/fault/gzip` sends: a gzip member of `gzipPlainText`.
  public static let gzipBody: [UInt8] = Gzip.storedMember(gzipPlainText)

  /// The filler pattern repeats every `patternPeriod` bytes.
  public static let patternPeriod = 1 << 16

  private static let patternTable: [UInt8] = (0..<patternPeriod).map {
    UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 8))
  }

  /// The deterministic filler used by fault bodies: byte `i` of a body is
  /// `UInt8(truncatingIfNeeded: i * 7 + (i >> 8))` (period 65 536); returns bytes
  /// `offset..<offset+count`.
  public static func patternBytes(count: Int, offset: Int = 0) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(max(0, count))
    var position = ((offset % patternPeriod) + patternPeriod) % patternPeriod
    var remaining = count
    while remaining > 0 {
      let take = min(remaining, patternPeriod - position)
      bytes += patternTable[position..<(position + take)]
      remaining -= take
      position = 0
    }
    return bytes
  }
}
