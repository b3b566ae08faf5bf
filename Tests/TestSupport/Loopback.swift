import Foundation
import Glibc
import Synchronization

/// Loopback sockets for tests and benchmarks: a free port for a server to take, a connection
/// to one, and waiting until something listens. One copy, so every harness finds ports and
/// waits for listeners the same way.
public enum Loopback {
  /// A TCP port on 127.0.0.1 that was free a moment ago, for a server that must be told its
  /// port in advance (nginx, `openssl s_server`, a second instance on one port).
  ///
  /// The port is taken below the kernel's ephemeral range (`ip_local_port_range`), where no
  /// port-0 bind and no outgoing connection of another test can take it between this call and
  /// the server's bind, and no two calls of this process return the same port. It was bound
  /// (and released) to check that nothing else holds it.
  /// - Throws: ``TestHTTPServerError`` naming the call that failed, or `bind` with `EADDRINUSE`
  ///   when no port of the range is free.
  public static func freePort() throws -> Int {
    let range = fixedPortRange()
    var lastError = EADDRINUSE
    for _ in 0..<range.count {
      let port = nextPort.withLock { next -> Int in
        defer { next += 1 }
        return range.lowerBound + next % range.count
      }
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { throw TestHTTPServerError(operation: "socket", code: errno) }
      var address = address(port: port)
      let bound = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      lastError = errno
      Glibc.close(fd)
      if bound == 0 { return port }
    }
    throw TestHTTPServerError(operation: "bind", code: lastError)
  }

  /// Where ``freePort()`` goes next (an offset into its range), starting at a place of this
  /// process's own so that test processes running side by side rarely start together.
  private static let nextPort = Mutex(Int(getpid()) &* 7919 % 4096)

  /// Ports below the kernel's ephemeral range: 10000 up to its first port (32768 unless
  /// `/proc/sys/net/ipv4/ip_local_port_range` says otherwise).
  private static func fixedPortRange() -> Range<Int> {
    var first = 32768
    if let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8),
      let low = text.split(whereSeparator: \.isWhitespace).first.flatMap({ Int($0) }), low > 12000
    {
      first = low
    }
    return 10000..<first
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
