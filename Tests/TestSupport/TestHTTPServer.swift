/// A real HTTP/1.1 server on loopback for tests: static and file routes, custom
/// handlers, built-in fault routes (see `FaultRoutes.swift`) and request counters.
///
/// Every connection is served on its own thread, with keep-alive (several requests
/// per connection) unless the client sends `Connection: close`. Clients hanging up at
/// any moment never crash the server (no SIGPIPE: all sends use `MSG_NOSIGNAL`).
///
/// ```swift
/// let server = try TestHTTPServer.start()
/// defer { server.stop() }
/// server.serve("/a.jpg", body: jpegBytes, contentType: "image/jpeg", etag: "\"v1\"")
/// // fetch server.url("/a.jpg") ...
/// #expect(server.requestCount(path: "/a.jpg") == 1)
/// ```
public final class TestHTTPServer: Sendable {
  let core: ServerCore

  /// The TCP port the server listens on.
  public let port: Int
  /// The address the server listens on, e.g. `"127.0.0.1"`.
  public let host: String

  private init(core: ServerCore, host: String, port: Int) {
    self.core = core
    self.host = host
    self.port = port
  }

  deinit {
    core.stop()
  }

  /// Binds `host` on an ephemeral port (backlog 512, SO_REUSEADDR), registers the
  /// fault routes and starts accepting connections on a background thread.
  public static func start(host: String = "127.0.0.1") throws -> TestHTTPServer {
    let listener = try ListeningSocket.open(host: host)
    let core = ServerCore(listenerFD: listener.fd)
    let server = TestHTTPServer(core: core, host: host, port: listener.port)
    FaultRoutes.register(on: core)
    try core.startAccepting()
    return server
  }

  /// `http://HOST:PORT` with no trailing slash (IPv6 hosts in brackets).
  public var baseURL: String {
    host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
  }

  /// The absolute URL of `path`, e.g. `url("/a.jpg")` → `"http://127.0.0.1:PORT/a.jpg"`.
  public func url(_ path: String) -> String {
    path.hasPrefix("/") ? baseURL + path : baseURL + "/" + path
  }

  /// Closes the listener and shuts every open connection down, so threads blocked in
  /// never-answering routes end. Idempotent, prompt; also called from `deinit`.
  public func stop() {
    core.stop()
  }

  // MARK: - Custom routes

  /// Answers requests for exactly `path` (query ignored) with `handler`, replacing any
  /// earlier route for it. The handler runs on the connection's thread; see
  /// `ResponseWriter` for how keep-alive is decided. A handler that writes nothing
  /// makes the server close the connection.
  public func route(_ path: String, _ handler: @escaping @Sendable (RecordedRequest, ResponseWriter) -> Void)
  {
    core.setRoute(path, handler)
  }

  /// Answers every path that starts with `prefix` (and has no exact route) with
  /// `handler`; when several prefixes match, the longest wins.
  public func routePrefix(
    _ prefix: String, _ handler: @escaping @Sendable (RecordedRequest, ResponseWriter) -> Void
  ) {
    core.setPrefixRoute(prefix, handler)
  }

  // MARK: - Counters

  /// Requests received for `path` (query string excluded) since the last reset.
  public func requestCount(path: String) -> Int {
    core.state.withLock { $0.counters.requestsByPath[path]?.count ?? 0 }
  }

  /// Distinct connections that carried at least one request for `path`.
  public func connectionCount(path: String) -> Int {
    core.state.withLock { $0.counters.connectionsByPath[path]?.count ?? 0 }
  }

  /// Connections accepted since the last reset.
  public var totalConnections: Int {
    core.state.withLock { $0.counters.totalConnections }
  }

  /// Requests received (any path) since the last reset.
  public var totalRequests: Int {
    core.state.withLock { $0.counters.totalRequests }
  }

  /// The requests received for `path` (query string excluded), oldest first.
  public func requests(path: String) -> [RecordedRequest] {
    core.state.withLock { $0.counters.requestsByPath[path] ?? [] }
  }

  /// Every request received since the last reset, oldest first.
  public var allRequests: [RecordedRequest] {
    core.state.withLock { $0.counters.allRequests }
  }

  /// Zeroes every counter and forgets recorded requests. Routes are kept.
  public func resetCounters() {
    core.state.withLock { $0.counters = ServerCounters() }
  }

  /// Number of connections currently open (accepted and not yet closed).
  public var openConnectionCount: Int {
    core.state.withLock { $0.openConnections.count }
  }
}
