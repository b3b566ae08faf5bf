import Glibc
import Synchronization
import TestSupport

/// nginx as an unprivileged child of the benchmark: a generated configuration in a temporary
/// directory, `daemon off`, `master_process off` (one process), listening on 127.0.0.1 only,
/// stopped with `SIGTERM` at the end.
final class NginxServer: MediaServer {
  /// The nginx executable looked for, in this order.
  static let candidates = ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]

  let name: String
  let baseURL: String
  private let prefix: String
  private let process = Mutex<pid_t?>(nil)

  /// Starts nginx serving `tree` from a configuration written into `directory`, and waits
  /// (at most 10 s) until it accepts connections.
  /// - Throws: ``BenchError`` when nginx is missing, will not start or never listens.
  init(tree: ContentTree, directory: String) throws {
    guard let executable = Self.candidates.first(where: { access($0, X_OK) == 0 }) else {
      throw BenchError("nginx is not installed")
    }
    prefix = directory + "/nginx"
    try Files.makeDirectory(prefix + "/temp")
    let port = try Loopback.freePort()
    try Files.write(
      Self.configuration(root: tree.root, prefix: prefix, port: port), to: prefix + "/nginx.conf")
    let version = Subprocess.firstLine(of: [executable, "-v"]) ?? "nginx"
    name = version.firstRange(of: "version: ").map { String(version[$0.upperBound...]) } ?? version
    baseURL = "http://127.0.0.1:\(port)"
    let pid = try Subprocess.spawn([
      executable, "-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log",
    ])
    process.withLock { $0 = pid }
    guard Loopback.waitUntilListening(port: port, seconds: 10) else {
      stop()
      let log = Files.read(prefix + "/error.log").map { String(decoding: $0, as: UTF8.self) } ?? ""
      throw BenchError("nginx did not start listening: \(log)")
    }
  }

  deinit { stop() }

  /// Parses the refusal log (`$uri $status $body_bytes_sent …`) for `path`.
  func bodyBytesSent(path: String) -> [Int64]? {
    guard let bytes = Files.read(prefix + "/refusal.log") else { return [] }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
      let fields = line.split(separator: " ")
      guard fields.count >= 3, fields[0] == path else { return nil }
      return Int64(fields[2])
    }
  }

  /// Sends `SIGTERM` and waits for nginx to exit (`SIGKILL` after 5 s).
  func stop() {
    let taken = process.withLock { pid -> pid_t? in
      defer { pid = nil }
      return pid
    }
    guard let pid = taken else { return }
    kill(pid, SIGTERM)
    for _ in 0..<500 {
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid { return }
      usleep(10_000)
    }
    kill(pid, SIGKILL)
    _ = Subprocess.wait(pid)
  }

  /// The generated configuration.
  private static func configuration(root: String, prefix: String, port: Int) -> String {
    let temp = prefix + "/temp"
    return """
      daemon off;
      master_process off;
      worker_processes 1;
      pid \(prefix)/nginx.pid;
      error_log \(prefix)/error.log warn;
      events { worker_connections 4096; }
      http {
        types { text/html html; image/jpeg jpg; audio/wav wav; }
        default_type application/octet-stream;
        sendfile on;
        tcp_nopush on;
        tcp_nodelay on;
        keepalive_timeout 120s;
        keepalive_requests 1000000;
        access_log off;
        log_format bench '$uri $status $body_bytes_sent $bytes_sent $request_time';
        client_body_temp_path \(temp)/body;
        proxy_temp_path \(temp)/proxy;
        fastcgi_temp_path \(temp)/fastcgi;
        uwsgi_temp_path \(temp)/uwsgi;
        scgi_temp_path \(temp)/scgi;
        server {
          listen 127.0.0.1:\(port) backlog=1024;
          server_name localhost;
          root \(root);
          add_header Cache-Control "max-age=86400";
          location /reval/ { add_header Cache-Control "max-age=0"; }
          location /as-jpeg/ {
            types { }
            default_type image/jpeg;
            add_header Cache-Control "no-cache";
            access_log \(prefix)/refusal.log bench;
          }
          location /big/ { access_log \(prefix)/refusal.log bench; }
        }
      }

      """
  }
}
