import Dispatch
import Glibc
import PosixLock
import Synchronization

/// A route handler: answers one request through the writer, on the connection's thread.
public typealias RouteHandler = @Sendable (RecordedRequest, ResponseWriter) -> Void

/// Request and connection counts, reset together by `resetCounters()`.
struct ServerCounters {
  var totalConnections = 0
  var totalRequests = 0
  var requestsByPath: [String: [RecordedRequest]] = [:]
  var connectionsByPath: [String: Set<Int>] = [:]
  var allRequests: [RecordedRequest] = []
}

/// The server's shared mutable state.
struct ServerState {
  var stopped = false
  var nextConnectionID = 0
  var openConnections: [Int: SocketHandle] = [:]
  var exactRoutes: [String: RouteHandler] = [:]
  var prefixRoutes: [(prefix: String, handler: RouteHandler)] = []
  var counters = ServerCounters()
}

/// The engine behind `TestHTTPServer`: owns the listener, the connection threads,
/// the routes and the counters. Threads hold the core, not the public server object,
/// so dropping the last `TestHTTPServer` reference still stops everything.
final class ServerCore: Sendable {
  let state = Locked(ServerState())
  private let stoppedFlag = Atomic(false)
  private let listener: SocketHandle
  private let acceptLoopEnded = DispatchSemaphore(value: 0)

  /// Wraps an already listening socket; call `startAccepting()` next.
  init(listenerFD: Int32) {
    listener = SocketHandle(fd: listenerFD)
  }

  /// Whether `stop()` has begun.
  var isStopped: Bool {
    stoppedFlag.load(ordering: .acquiring)
  }

  /// Starts the accept loop thread; on failure the listener is closed and the core is
  /// left stopped.
  func startAccepting() throws {
    guard spawnDetachedThread({ [self] in acceptLoop() }) else {
      let code = errno
      state.withLock { $0.stopped = true }
      stoppedFlag.store(true, ordering: .releasing)
      listener.close()
      throw TestHTTPServerError(operation: "pthread_create", code: code)
    }
  }

  /// Closes the listener and shuts every open connection down. Idempotent; returns as
  /// soon as the listener is closed (connection threads finish on their own, promptly).
  func stop() {
    let connections = state.withLock { state -> [SocketHandle]? in
      if state.stopped { return nil }
      state.stopped = true
      return Array(state.openConnections.values)
    }
    guard let connections else { return }
    stoppedFlag.store(true, ordering: .releasing)
    listener.shutdown()
    for connection in connections { connection.shutdown() }
    _ = acceptLoopEnded.wait(timeout: .now() + .seconds(2))
  }

  // MARK: - Routes

  /// Registers `handler` for exactly `path` (replacing any earlier route).
  func setRoute(_ path: String, _ handler: @escaping RouteHandler) {
    state.withLock { $0.exactRoutes[path] = handler }
  }

  /// Registers `handler` for every path starting with `prefix`; the longest prefix wins.
  func setPrefixRoute(_ prefix: String, _ handler: @escaping RouteHandler) {
    state.withLock { state in
      state.prefixRoutes.removeAll { $0.prefix == prefix }
      state.prefixRoutes.append((prefix: prefix, handler: handler))
    }
  }

  private func handler(for path: String) -> RouteHandler? {
    state.withLock { state in
      if let exact = state.exactRoutes[path] { return exact }
      return state.prefixRoutes
        .filter { path.hasPrefix($0.prefix) }
        .max { $0.prefix.count < $1.prefix.count }?
        .handler
    }
  }

  // MARK: - Accepting

  private func acceptLoop() {
    defer {
      listener.close()
      acceptLoopEnded.signal()
    }
    while true {
      let listenerFD = listener.fd
      guard listenerFD >= 0 else { return }
      // Close-on-exec from the start: a child spawned by another test in between would hold
      // the connection open after the server closes it.
      let fd = acceptCloseOnExec(listenerFD)
      if fd < 0 {
        let code = errno
        if isStopped { return }
        switch code {
        case EINTR, ECONNABORTED, EPROTO: continue
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          usleep(10_000)
          continue
        default: return
        }
      }
      var one: Int32 = 1
      _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
      let socket = SocketHandle(fd: fd)
      let id = state.withLock { state -> Int? in
        if state.stopped { return nil }
        state.nextConnectionID += 1
        state.openConnections[state.nextConnectionID] = socket
        state.counters.totalConnections += 1
        return state.nextConnectionID
      }
      guard let id else {
        socket.close()
        return
      }
      let spawned = spawnDetachedThread { [self] in
        serveConnection(id: id, socket: socket)
      }
      if !spawned {
        state.withLock { _ = $0.openConnections.removeValue(forKey: id) }
        socket.close(reset: true)
      }
    }
  }

  // MARK: - Serving a connection

  private func serveConnection(id: Int, socket: SocketHandle) {
    let reader = HTTPRequestReader(socket: socket, connectionID: id)
    var index = 0
    var wasReset = false
    serving: while !isStopped {
      switch reader.readRequest(index: index) {
      case .closed:
        break serving
      case .malformed(let status, let reason):
        let body = Array("\(status) \(HTTPStatus.reasonPhrase(status)): \(reason)\n".utf8)
        let head =
          "HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))\r\n"
          + "Content-Type: text/plain\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        _ = sendAll(socket.fd, Array(head.utf8) + body)
        break serving
      case .request(let request):
        index += 1
        record(request)
        let writer = ResponseWriter(request: request, socket: socket) { [self] in isStopped }
        if let handler = handler(for: request.path) {
          handler(request, writer)
        } else {
          Self.notFound(request, writer)
        }
        if writer.wasReset {
          wasReset = true
          break serving
        }
        if !writer.canKeepAlive { break serving }
      }
    }
    if !wasReset { lingeringClose(socket) }
    state.withLock { _ = $0.openConnections.removeValue(forKey: id) }
  }

  /// Sends end-of-stream, then reads until the client closes (at most one second) so
  /// that closing does not turn into a reset that could destroy undelivered bytes.
  private func lingeringClose(_ socket: SocketHandle) {
    socket.shutdownWrite()
    let deadline = monotonicMilliseconds() + 1000
    var scratch = [UInt8](repeating: 0, count: 16 * 1024)
    while !isStopped {
      let remaining = deadline - monotonicMilliseconds()
      let fd = socket.fd
      if remaining <= 0 || fd < 0 { break }
      var watch = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&watch, 1, Int32(remaining)) <= 0 { break }
      if scratch.withUnsafeMutableBytes({ receive(fd, $0) }) <= 0 { break }
    }
    socket.close()
  }

  private func record(_ request: RecordedRequest) {
    state.withLock { state in
      state.counters.totalRequests += 1
      state.counters.requestsByPath[request.path, default: []].append(request)
      state.counters.connectionsByPath[request.path, default: []].insert(request.connectionID)
      state.counters.allRequests.append(request)
    }
  }

  /// Answers 404 with a small HTML page.
  static func notFound(_ request: RecordedRequest, _ writer: ResponseWriter) {
    writer.respond(
      status: 404, headers: [("Content-Type", "text/html; charset=utf-8")],
      body: HTTPStatus.htmlPage(404))
  }
}
