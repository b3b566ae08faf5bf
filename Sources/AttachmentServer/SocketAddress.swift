import Glibc

/// An IPv4 or IPv6 socket address parsed from a literal.
struct SocketAddress {
  private var storage = sockaddr_storage()
  /// Whether the address is IPv6.
  let isIPv6: Bool

  /// The address `host:port`, or `nil` when `host` is not an IP literal.
  init?(host: String, port: UInt16) {
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, host, &v4) == 1 {
      isIPv6 = false
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      address.sin_addr = v4
      withUnsafeMutableBytes(of: &storage) { raw in raw.storeBytes(of: address, as: sockaddr_in.self) }
    } else if inet_pton(AF_INET6, host, &v6) == 1 {
      isIPv6 = true
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      address.sin6_addr = v6
      withUnsafeMutableBytes(of: &storage) { raw in raw.storeBytes(of: address, as: sockaddr_in6.self) }
    } else {
      return nil
    }
  }

  /// Calls `body` with a pointer to the `sockaddr`.
  func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>?) -> T) -> T {
    withUnsafeBytes(of: storage) { raw in
      body(raw.baseAddress.map { $0.assumingMemoryBound(to: sockaddr.self) })
    }
  }

  /// The `errno` binding this address fails with (`EADDRINUSE`, `EADDRNOTAVAIL`, …), tried
  /// with a socket of its own (`SO_REUSEADDR`, never `SO_REUSEPORT`); `nil` when it binds.
  func bindError() -> Int32? {
    let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let probe = Glibc.socket(isIPv6 ? AF_INET6 : AF_INET, kind, 0)
    guard probe >= 0 else { return errno }
    defer { _ = Glibc.close(probe) }
    var on: Int32 = 1
    _ = setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    let length = socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    let bound = withSockaddr { Glibc.bind(probe, $0, length) }
    return bound == 0 ? nil : errno
  }
}
