import Glibc
import PosixLock

/// Writes one response on a connection, for route handlers.
///
/// Use it from the handler's own thread. The writer tracks framing: after the handler
/// returns, the connection is kept alive only if a complete, correctly framed response
/// was written (a head with `Content-Length` and exactly that many body bytes, or a
/// finished chunked body, or a bodiless status / HEAD request) and neither side asked
/// to close. Otherwise the server closes the connection.
///
/// Writes return false once the client has gone away (or the server is stopping);
/// handlers should then return. Nothing ever raises SIGPIPE.
public final class ResponseWriter: Sendable {
  private struct State {
    var headSent = false
    var declaredLength: Int64?
    var chunked = false
    var chunksFinished = false
    var bodyBytes: Int64 = 0
    var bodyless = false
    var unframed = false
    var closeAfter = false
    var closed = false
    var reset = false
  }

  private enum Plan {
    case send
    case skip
    case fail
  }

  /// The request being answered.
  public let request: RecordedRequest
  private let socket: SocketHandle
  private let isServerStopped: @Sendable () -> Bool
  private let state = Locked(State())

  /// Creates a writer for `request` on `socket`.
  init(request: RecordedRequest, socket: SocketHandle, isServerStopped: @escaping @Sendable () -> Bool) {
    self.request = request
    self.socket = socket
    self.isServerStopped = isServerStopped
  }

  /// Whether the request is a HEAD request (body writes are then silently dropped).
  public var isHeadRequest: Bool {
    request.method == "HEAD"
  }

  /// Whether the connection is still usable: not closed by the handler, no write
  /// failed, and the server is not stopping.
  public var isConnectionOpen: Bool {
    !state.withLock { $0.closed } && !isServerStopped()
  }

  // MARK: - Heads and bodies

  /// Writes `HTTP/1.1 status reason` and the headers. A `Connection: close` header is
  /// added when the client asked for it and `headers` has no `Connection` header.
  /// Statuses 100–199 are interim: another head may follow.
  @discardableResult
  public func writeHead(status: Int, reason: String? = nil, headers: [(String, String)] = []) -> Bool {
    var text = "HTTP/1.1 \(status) \(reason ?? HTTPStatus.reasonPhrase(status))\r\n"
    var length: Int64?
    var chunked = false
    var responseCloses = false
    var hasConnectionHeader = false
    for (name, value) in headers {
      text += "\(name): \(value)\r\n"
      switch name.lowercased() {
      case "content-length": length = Int64(value.trimmingASCIIWhitespace())
      case "transfer-encoding": chunked = chunked || value.lowercased().contains("chunked")
      case "connection":
        hasConnectionHeader = true
        responseCloses = responseCloses || value.lowercased().contains("close")
      default: break
      }
    }
    let interim = (100..<200).contains(status)
    if request.wantsClose && !hasConnectionHeader && !interim {
      text += "Connection: close\r\n"
      responseCloses = true
    }
    text += "\r\n"
    let plan = state.withLock { state -> Plan in
      if state.closed { return .fail }
      if interim { return .send }
      if state.headSent {
        state.unframed = true
      } else {
        state.headSent = true
        state.declaredLength = length
        state.chunked = chunked
        state.bodyless = isHeadRequest || status == 204 || status == 304
        state.closeAfter = state.closeAfter || responseCloses || request.wantsClose
      }
      return .send
    }
    guard plan == .send else { return false }
    return send(Array(text.utf8))
  }

  /// Writes body bytes as they are (no chunk framing). Dropped for HEAD requests and
  /// bodiless statuses; bytes written before any head are sent raw.
  @discardableResult
  public func write(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeBody($0) }
  }

  /// Writes the UTF-8 bytes of `text` as body bytes.
  @discardableResult
  public func write(_ text: String) -> Bool {
    write(Array(text.utf8))
  }

  /// Writes body bytes from a buffer (see `write(_:)`).
  @discardableResult
  public func writeBody(_ buffer: UnsafeRawBufferPointer) -> Bool {
    let plan = state.withLock { state -> Plan in
      if state.closed { return .fail }
      if !state.headSent {
        state.unframed = true
      } else if state.bodyless {
        return .skip
      }
      return .send
    }
    switch plan {
    case .fail: return false
    case .skip: return true
    case .send:
      guard sendAll(socket.fd, buffer) else {
        markClosed()
        return false
      }
      state.withLock { $0.bodyBytes += Int64(buffer.count) }
      return true
    }
  }

  /// Writes a complete response: the head with `Content-Length` (unless `headers`
  /// already has one), then `body`.
  @discardableResult
  public func respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) -> Bool {
    var all = headers
    if !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
      all.append(("Content-Length", String(body.count)))
    }
    guard writeHead(status: status, headers: all) else { return false }
    return body.isEmpty || write(body)
  }

  /// Writes one chunk of a `Transfer-Encoding: chunked` body (size line, data, CRLF).
  /// An empty array writes nothing; use `finishChunks()` to end the body.
  @discardableResult
  public func writeChunk(_ bytes: [UInt8]) -> Bool {
    guard !bytes.isEmpty else { return true }
    let framed = Array(String(bytes.count, radix: 16).utf8) + [0x0D, 0x0A] + bytes + [0x0D, 0x0A]
    return write(framed)
  }

  /// Ends a chunked body with the zero-length chunk.
  @discardableResult
  public func finishChunks() -> Bool {
    guard write(Array("0\r\n\r\n".utf8)) else { return false }
    state.withLock { $0.chunksFinished = true }
    return true
  }

  /// Writes bytes verbatim, bypassing all framing (for malformed responses).
  /// The connection is closed after the handler returns.
  @discardableResult
  public func writeRaw(_ bytes: [UInt8]) -> Bool {
    let open = state.withLock { state -> Bool in
      state.unframed = true
      return !state.closed
    }
    guard open else { return false }
    return send(bytes)
  }

  // MARK: - Timing and closing

  /// Waits `milliseconds`, returning early with false if the client hangs up, the
  /// connection was closed, or the server stops; true after a full wait.
  @discardableResult
  public func sleep(milliseconds: Int) -> Bool {
    let deadline = monotonicMilliseconds() + Int64(max(0, milliseconds))
    while true {
      guard isConnectionOpen else { return false }
      let remaining = deadline - monotonicMilliseconds()
      if remaining <= 0 { return true }
      let fd = socket.fd
      guard fd >= 0 else { return false }
      var watch = pollfd(fd: fd, events: pollReadHangUp, revents: 0)
      let ready = poll(&watch, 1, Int32(min(remaining, 100)))
      let hangUp = pollReadHangUp | Int16(POLLHUP) | Int16(POLLERR) | Int16(POLLNVAL)
      if ready > 0 && (watch.revents & hangUp) != 0 {
        markClosed()
        return false
      }
    }
  }

  /// Blocks until the client closes the connection or the server stops, discarding
  /// anything the client sends meanwhile.
  public func waitForClientToClose() {
    var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    while !isServerStopped() {
      let count = scratch.withUnsafeMutableBytes { receive(socket.fd, $0) }
      if count <= 0 { break }
    }
    markClosed()
  }

  /// Closes the connection gracefully: queued bytes are delivered, then end-of-stream.
  /// Later writes fail.
  public func closeConnection() {
    markClosed()
    socket.shutdownWrite()
  }

  /// Closes the connection abruptly with a TCP reset; unsent bytes may be lost.
  /// Later writes fail.
  public func resetConnection() {
    state.withLock {
      $0.closed = true
      $0.reset = true
    }
    socket.close(reset: true)
  }

  // MARK: - Server side

  /// Whether the server may read another request on this connection.
  var canKeepAlive: Bool {
    state.withLock { state in
      guard state.headSent, !state.closed, !state.unframed, !state.closeAfter else { return false }
      if state.bodyless { return true }
      if state.chunked { return state.chunksFinished }
      return state.declaredLength == state.bodyBytes
    }
  }

  /// Whether the handler reset the connection (it is then already closed).
  var wasReset: Bool {
    state.withLock { $0.reset }
  }

  /// Whether anything at all was written.
  var wroteAnything: Bool {
    state.withLock { $0.headSent || $0.unframed }
  }

  private func send(_ bytes: [UInt8]) -> Bool {
    guard sendAll(socket.fd, bytes) else {
      markClosed()
      return false
    }
    return true
  }

  private func markClosed() {
    state.withLock { $0.closed = true }
  }
}
