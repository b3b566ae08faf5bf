import Glibc

/// An IPv4 or IPv6 address as bytes (4 or 16), for the access log's client address and the
/// trusted tier's networks. An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack
/// socket reports for an IPv4 peer) is held as the IPv4 address it maps.
struct IPAddress: Equatable, Sendable {
  /// The address bytes in network order: 4 for IPv4, 16 for IPv6.
  let bytes: [UInt8]

  /// The address a literal names (`192.0.2.1`, `2001:db8::1`), or `nil` for anything else
  /// (a name, a port, brackets, spaces).
  init?(_ text: some StringProtocol) {
    guard text.utf8.count <= 64 else { return nil }
    var v4 = in_addr()
    var v6 = in6_addr()
    let string = String(text)
    if inet_pton(AF_INET, string, &v4) == 1 {
      self.init(raw: withUnsafeBytes(of: &v4) { Array($0) })
    } else if inet_pton(AF_INET6, string, &v6) == 1 {
      self.init(raw: withUnsafeBytes(of: &v6) { Array($0) })
    } else {
      return nil
    }
  }

  /// The address of a socket address (`AF_INET` or `AF_INET6`), or `nil` for another family.
  init?(_ address: UnsafePointer<sockaddr>) {
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
      let v4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
      self.init(raw: withUnsafeBytes(of: v4.sin_addr) { Array($0) })
    case AF_INET6:
      let v6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
      self.init(raw: withUnsafeBytes(of: v6.sin6_addr) { Array($0) })
    default:
      return nil
    }
  }

  /// 4 or 16 bytes; an IPv4-mapped IPv6 address becomes its IPv4 address.
  private init(raw: [UInt8]) {
    let mapped: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
    bytes = raw.count == 16 && raw.starts(with: mapped) ? Array(raw[12...]) : raw
  }

  /// The canonical text (`inet_ntop`): `192.0.2.1`, `2001:db8::1`.
  var text: String {
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let family = bytes.count == 4 ? AF_INET : AF_INET6
    let written = bytes.withUnsafeBytes { raw in
      inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
    }
    guard written != nil else { return "-" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
