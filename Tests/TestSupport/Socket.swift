import Glibc
import PosixLock

/// An error raised while starting a `TestHTTPServer`.
public struct TestHTTPServerError: Error, CustomStringConvertible, Sendable {
  /// The system call or step that failed, e.g. `"bind"`.
  public let operation: String
  /// The `errno` value observed (0 when not applicable).
  public let code: Int32

  /// A human-readable summary including the `strerror` text.
  public var description: String {
    let text = code == 0 ? "invalid argument" : String(cString: strerror(code))
    return "\(operation) failed: \(text) (errno \(code))"
  }
}

/// Linux `POLLRDHUP` (peer closed its writing half); not exported by the Glibc module.
let pollReadHangUp: Int16 = 0x2000

/// Owns one socket descriptor.
///
/// Only the thread that owns the connection performs I/O on `fd` and closes it; any
/// thread may call `shutdown()`. Both go through the lock, so a shutdown never hits a
/// descriptor number that has already been closed and reused.
final class SocketHandle: Sendable {
  private let descriptor: Locked<Int32>

  /// Wraps an open descriptor.
  init(fd: Int32) {
    descriptor = Locked(fd)
  }

  /// The descriptor, or -1 once closed.
  var fd: Int32 {
    descriptor.withLock { $0 }
  }

  /// Shuts both directions down, waking any thread blocked on the socket.
  func shutdown() {
    descriptor.withLock { fd in
      if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }
  }

  /// Shuts the sending direction down, so the peer sees end-of-stream after queued data.
  func shutdownWrite() {
    descriptor.withLock { fd in
      if fd >= 0 { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }
  }

  /// Closes the descriptor; with `reset`, the peer receives a TCP RST instead of a FIN.
  func close(reset: Bool = false) {
    descriptor.withLock { fd in
      guard fd >= 0 else { return }
      if reset {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(
          fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
      }
      _ = Glibc.close(fd)
      fd = -1
    }
  }
}

/// Sends every byte of `buffer`, never raising SIGPIPE; false when the peer is gone.
func sendAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
  guard fd >= 0 else { return false }
  guard let base = buffer.baseAddress else { return true }
  var offset = 0
  while offset < buffer.count {
    let sent = send(fd, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
    if sent < 0 {
      if errno == EINTR { continue }
      return false
    }
    offset += sent
  }
  return true
}

/// Sends every byte of `bytes`; false when the peer is gone.
func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
  bytes.withUnsafeBytes { sendAll(fd, $0) }
}

/// Receives up to `buffer.count` bytes: the count, 0 at end of stream, -1 on error.
func receive(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
  guard fd >= 0, let base = buffer.baseAddress else { return -1 }
  while true {
    let count = recv(fd, base, buffer.count, 0)
    if count < 0 && errno == EINTR { continue }
    return count
  }
}

/// Milliseconds on the monotonic clock.
func monotonicMilliseconds() -> Int64 {
  var now = timespec()
  _ = clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}

/// A bound, listening TCP socket on an ephemeral port.
struct ListeningSocket {
  /// The listening descriptor.
  let fd: Int32
  /// The port the kernel chose.
  let port: Int

  /// Creates a socket on `host` (IPv4 or IPv6 literal), port 0, SO_REUSEADDR, listening.
  static func open(host: String, backlog: Int32 = 512) throws -> ListeningSocket {
    let isIPv6 = host.contains(":")
    let family = isIPv6 ? AF_INET6 : AF_INET
    let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestHTTPServerError(operation: "socket", code: errno) }
    var one: Int32 = 1
    _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    do {
      let port = isIPv6 ? try bindIPv6(fd, host) : try bindIPv4(fd, host)
      guard listen(fd, backlog) == 0 else {
        throw TestHTTPServerError(operation: "listen", code: errno)
      }
      return ListeningSocket(fd: fd, port: port)
    } catch {
      _ = Glibc.close(fd)
      throw error
    }
  }

  private static func bindIPv4(_ fd: Int32, _ host: String) throws -> Int {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
      throw TestHTTPServerError(operation: "inet_pton(\(host))", code: 0)
    }
    try bindAndName(fd, &address)
    return Int(UInt16(bigEndian: address.sin_port))
  }

  private static func bindIPv6(_ fd: Int32, _ host: String) throws -> Int {
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_port = 0
    guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
      throw TestHTTPServerError(operation: "inet_pton(\(host))", code: 0)
    }
    try bindAndName(fd, &address)
    return Int(UInt16(bigEndian: address.sin6_port))
  }

  /// Binds `fd` to `address` (any `sockaddr_*`), then reads back the address the kernel chose.
  private static func bindAndName<Address>(_ fd: Int32, _ address: inout Address) throws {
    let size = socklen_t(MemoryLayout<Address>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
    }
    guard bound == 0 else { throw TestHTTPServerError(operation: "bind", code: errno) }
    var length = size
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw TestHTTPServerError(operation: "getsockname", code: errno) }
  }
}

/// `accept4(fd, nil, nil, SOCK_CLOEXEC)`: Glibc's Swift module leaves `accept4` out (it is a
/// GNU extension), so it is looked up once by name. Without it, `accept` then `fcntl` would
/// leave a window in which a child spawned on another thread inherits the connection.
func acceptCloseOnExec(_ listener: Int32) -> Int32 {
  guard let accept4 = Accept4.function else {
    errno = ENOSYS
    return -1
  }
  return accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
}

private enum Accept4 {
  typealias Function =
    @convention(c) (
      Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32
  static let function: Function? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4").map {
    unsafeBitCast($0, to: Function.self)
  }
}
