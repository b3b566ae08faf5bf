import Glibc

/// What reading the next request from a connection produced.
enum RequestReadOutcome {
  /// A complete request, body included.
  case request(RecordedRequest)
  /// The peer closed (or the server shut the socket) between requests.
  case closed
  /// The bytes were not a valid request; answer `status` and close.
  case malformed(status: Int, reason: String)
}

/// Reads HTTP/1.x requests from one connection, keeping bytes that arrive early
/// (pipelining) for the next request.
final class HTTPRequestReader {
  /// Largest accepted request head (request line plus headers).
  static let maxHeadBytes = 1 << 20
  /// Largest accepted request body.
  static let maxBodyBytes = 64 << 20

  private let socket: SocketHandle
  private let connectionID: Int
  private var buffer: [UInt8] = []
  private var start = 0

  /// Creates a reader for the connection `socket`, identified as `connectionID`.
  init(socket: SocketHandle, connectionID: Int) {
    self.socket = socket
    self.connectionID = connectionID
  }

  /// Reads the next request; `index` is its position on the connection.
  func readRequest(index: Int) -> RequestReadOutcome {
    compact()
    var headBytes = 0
    var requestLine: String?
    while requestLine == nil {
      guard let line = readLine(budget: &headBytes) else {
        return headBytes == 0 ? .closed : Self.incompleteHead(headBytes)
      }
      if headBytes > Self.maxHeadBytes { return Self.incompleteHead(headBytes) }
      if !line.isEmpty { requestLine = line }  // Tolerate blank lines before a request.
    }
    guard let requestLine else { return .closed }
    let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
    guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
      return .malformed(status: 400, reason: "bad request line")
    }
    var headers: [(name: String, value: String)] = []
    while true {
      guard let line = readLine(budget: &headBytes) else { return Self.incompleteHead(headBytes) }
      if headBytes > Self.maxHeadBytes { return Self.incompleteHead(headBytes) }
      if line.isEmpty { break }
      guard let colon = line.firstIndex(of: ":") else {
        return .malformed(status: 400, reason: "bad header line")
      }
      let name = String(line[..<colon])
      let value = line[line.index(after: colon)...].trimmingASCIIWhitespace()
      headers.append((name: name, value: value))
    }
    let target = String(parts[1])
    let (path, query) = Self.splitTarget(target)
    var request = RecordedRequest(
      method: String(parts[0]), target: target, path: path, query: query,
      version: String(parts[2]), headers: headers, connectionID: connectionID,
      indexOnConnection: index)
    switch readBody(for: request) {
    case .success(let body):
      if !body.isEmpty {
        request = RecordedRequest(
          method: request.method, target: target, path: path, query: query,
          version: request.version, headers: headers, body: body,
          connectionID: connectionID, indexOnConnection: index)
      }
      return .request(request)
    case .failure(let failure):
      return .malformed(status: failure.status, reason: failure.reason)
    }
  }

  /// The answer for a head that ended early (400) or grew past the limit (431).
  private static func incompleteHead(_ headBytes: Int) -> RequestReadOutcome {
    headBytes > maxHeadBytes
      ? .malformed(status: 431, reason: "request head too large")
      : .malformed(status: 400, reason: "truncated request head")
  }

  /// Splits a request target into a path and an optional query; absolute-form targets
  /// (`http://host/p`) are reduced to their path.
  static func splitTarget(_ target: String) -> (path: String, query: String?) {
    var rest = Substring(target)
    if !rest.hasPrefix("/"), let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://") {
      let afterScheme = rest[rest.index(colon, offsetBy: 3)...]
      rest = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
    }
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    guard let mark = rest.firstIndex(of: "?") else { return (String(rest), nil) }
    return (String(rest[..<mark]), String(rest[rest.index(after: mark)...]))
  }

  // MARK: - Body

  private struct BodyFailure: Error {
    let status: Int
    let reason: String
  }

  private func readBody(for request: RecordedRequest) -> Result<[UInt8], BodyFailure> {
    let encodings = request.headerValues("Transfer-Encoding").joined(separator: ",").lowercased()
    let lengthText = request.header("Content-Length")
    let isChunked = encodings.contains("chunked")
    if !isChunked && lengthText == nil { return .success([]) }
    if let expect = request.header("Expect"), expect.lowercased() == "100-continue" {
      _ = sendAll(socket.fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }
    if isChunked { return readChunkedBody() }
    guard let lengthText, let length = Int(lengthText.trimmingASCIIWhitespace()), length >= 0
    else { return .failure(BodyFailure(status: 400, reason: "bad Content-Length")) }
    guard length <= Self.maxBodyBytes else {
      return .failure(BodyFailure(status: 413, reason: "body too large"))
    }
    guard let body = readExactly(length) else {
      return .failure(BodyFailure(status: 400, reason: "truncated body"))
    }
    return .success(body)
  }

  private func readChunkedBody() -> Result<[UInt8], BodyFailure> {
    var body: [UInt8] = []
    var budget = 0
    while true {
      guard let sizeLine = readLine(budget: &budget) else {
        return .failure(BodyFailure(status: 400, reason: "truncated chunk size"))
      }
      let sizeText = sizeLine.split(separator: ";").first.map { $0.trimmingASCIIWhitespace() }
      guard let sizeText, let size = Int(sizeText, radix: 16), size >= 0 else {
        return .failure(BodyFailure(status: 400, reason: "bad chunk size"))
      }
      if size == 0 { break }
      guard body.count + size <= Self.maxBodyBytes else {
        return .failure(BodyFailure(status: 413, reason: "body too large"))
      }
      guard let chunk = readExactly(size), let end = readLine(budget: &budget), end.isEmpty
      else { return .failure(BodyFailure(status: 400, reason: "truncated chunk")) }
      body += chunk
    }
    while true {  // Trailer section, ignored.
      guard let line = readLine(budget: &budget) else {
        return .failure(BodyFailure(status: 400, reason: "truncated trailers"))
      }
      if line.isEmpty { return .success(body) }
      if budget > Self.maxHeadBytes {
        return .failure(BodyFailure(status: 431, reason: "trailers too large"))
      }
    }
  }

  // MARK: - Buffering

  /// Reads one line ending in LF (a preceding CR is dropped); nil at end of stream.
  /// Adds the bytes consumed to `budget` and gives up once it passes the head limit.
  private func readLine(budget: inout Int) -> String? {
    var scanFrom = start
    while true {
      if let newline = buffer[scanFrom...].firstIndex(of: 0x0A) {
        var end = newline
        if end > start && buffer[end - 1] == 0x0D { end -= 1 }
        let line = String(decoding: buffer[start..<end], as: UTF8.self)
        budget += newline + 1 - start
        start = newline + 1
        return line
      }
      scanFrom = buffer.count
      if buffer.count - start + budget > Self.maxHeadBytes {
        budget += buffer.count - start
        return nil
      }
      guard fill() else {
        budget += buffer.count - start
        return nil
      }
    }
  }

  /// Reads exactly `count` bytes; nil if the stream ends first.
  private func readExactly(_ count: Int) -> [UInt8]? {
    while buffer.count - start < count {
      guard fill() else { return nil }
    }
    let bytes = Array(buffer[start..<(start + count)])
    start += count
    return bytes
  }

  /// Appends whatever the socket has (blocking); false at end of stream or on error.
  private func fill() -> Bool {
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    let count = chunk.withUnsafeMutableBytes { receive(socket.fd, $0) }
    guard count > 0 else { return false }
    buffer.append(contentsOf: chunk[0..<count])
    return true
  }

  /// Drops consumed bytes from the front of the buffer.
  private func compact() {
    guard start > 0 else { return }
    buffer.removeFirst(start)
    start = 0
  }
}
