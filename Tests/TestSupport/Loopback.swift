import Glibc

/// Loopback sockets for tests and benchmarks: a free port for a server to take, a connection
/// to one, and waiting until something listens. One copy, so every harness finds ports and
/// waits for listeners the same way.
public enum Loopback {
  /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
  /// - Throws: ``TestHTTPServerError`` naming the call that failed.
  public static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestHTTPServerError(operation: "socket", code: errno) }
    defer { Glibc.close(fd) }
    var address = address(port: 0)
    let bound = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else { throw TestHTTPServerError(operation: "bind", code: errno) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw TestHTTPServerError(operation: "getsockname", code: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// A TCP connection to 127.0.0.1:`port` (a blocking descriptor the caller closes), or `nil`
  /// when nothing accepts it now.
  public static func connect(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = address(port: port)
    let connected = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      Glibc.close(fd)
      return nil
    }
    return fd
  }

  /// Whether something accepts TCP connections on 127.0.0.1:`port` within `seconds`
  /// (tried every 20 ms).
  public static func waitUntilListening(port: Int, seconds: Double) -> Bool {
    let tries = max(1, Int(seconds / 0.02))
    for _ in 0..<tries {
      if let fd = connect(port: port) {
        Glibc.close(fd)
        return true
      }
      usleep(20_000)
    }
    return false
  }

  /// `127.0.0.1:port` as a `sockaddr_in`.
  private static func address(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }
}
