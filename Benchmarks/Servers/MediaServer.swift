import TestSupport

/// A loopback HTTP server offering the ``ContentTree``.
protocol MediaServer: Sendable {
  /// What it is, for the report (e.g. `nginx/1.22.1`).
  var name: String { get }
  /// `http://127.0.0.1:PORT`.
  var baseURL: String { get }
  /// Body bytes the server reports having sent for requests of `path` (oldest first), or
  /// `nil` when the server does not log them.
  func bodyBytesSent(path: String) -> [Int64]?
  /// Stops the server (idempotent).
  func stop()
}

extension MediaServer {
  /// The absolute URL of `path`, with `?i=N` when `iteration` is given (a distinct cache key
  /// for the same file).
  func url(_ path: String, iteration: Int? = nil) -> String {
    guard let iteration else { return baseURL + path }
    return baseURL + path + "?i=\(iteration)"
  }
}

/// The project's own `TestHTTPServer` serving the tree (used when nginx is not installed).
final class BuiltInServer: MediaServer {
  private let server: TestHTTPServer

  /// Starts a `TestHTTPServer` on 127.0.0.1 and registers every resource of `tree`.
  /// - Throws: when the server cannot bind.
  init(tree: ContentTree) throws {
    server = try TestHTTPServer.start(host: "127.0.0.1")
    for resource in tree.resources {
      server.serveFile(
        resource.path, file: resource.file, contentType: resource.contentType,
        headers: resource.headers, etag: resource.etag)
    }
  }

  /// Describes the server.
  var name: String { "TestHTTPServer (built-in, thread per connection)" }
  /// The server's base URL.
  var baseURL: String { server.baseURL }
  /// Not logged by the built-in server.
  func bodyBytesSent(path: String) -> [Int64]? { nil }
  /// Stops the server.
  func stop() { server.stop() }
}
