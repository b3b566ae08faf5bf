import Glibc

/// Loopback socket helpers: finding a free port and waiting for a listener.
enum Loopback {
  /// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
  /// - Throws: ``BenchError`` when no socket can be bound.
  static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw BenchError("socket failed") }
    defer { close(fd) }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else { throw BenchError("bind failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw BenchError("getsockname failed") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Whether something accepts TCP connections on 127.0.0.1:`port` within `seconds`
  /// (tried every 20 ms).
  static func waitUntilListening(port: Int, seconds: Double) -> Bool {
    let tries = max(1, Int(seconds / 0.02))
    for _ in 0..<tries {
      if canConnect(port: port) { return true }
      usleep(20_000)
    }
    return false
  }

  /// Whether one TCP connection to 127.0.0.1:`port` succeeds now.
  private static func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = loopbackAddress(port: port)
    let connected = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    return connected == 0
  }

  /// `127.0.0.1:port` as a `sockaddr_in`.
  private static func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
  }
}
