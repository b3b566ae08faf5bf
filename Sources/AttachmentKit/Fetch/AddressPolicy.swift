import Glibc

/// Which peer addresses a transfer may connect to.
///
/// By default the downloader refuses loopback, private, link-local (including the cloud
/// metadata address 169.254.169.254), unique-local, shared (CGNAT) and unspecified addresses,
/// so that a URL in a push payload cannot reach into the network the service runs in. The
/// check runs on the address actually connected to (libcurl's open-socket callback), after
/// DNS and on every redirect, so DNS rebinding and redirects cannot dodge it.
enum AddressPolicy {
  /// Why an address is refused, or `nil` when it is a public address.
  static func refusal(for address: UnsafePointer<sockaddr>) -> String? {
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
      return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
        let value = UInt32(bigEndian: pointer.pointee.sin_addr.s_addr)
        return refusal(ipv4: value)
      }
    case AF_INET6:
      return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: pointer.pointee.sin6_addr) { raw in
          for index in 0..<16 { bytes[index] = raw[index] }
        }
        return refusal(ipv6: bytes)
      }
    default:
      return "a non-IP address family"
    }
  }

  /// Why an IPv4 address (host byte order) is refused, or `nil`.
  static func refusal(ipv4 value: UInt32) -> String? {
    func within(_ base: UInt32, _ bits: UInt32) -> Bool {
      let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
      return value & mask == base & mask
    }
    if within(0x0000_0000, 8) { return "an unspecified address (0.0.0.0/8)" }
    if within(0x7F00_0000, 8) { return "a loopback address (127.0.0.0/8)" }
    if within(0x0A00_0000, 8) { return "a private address (10.0.0.0/8)" }
    if within(0xAC10_0000, 12) { return "a private address (172.16.0.0/12)" }
    if within(0xC0A8_0000, 16) { return "a private address (192.168.0.0/16)" }
    if within(0xA9FE_0000, 16) { return "a link-local address (169.254.0.0/16, cloud metadata)" }
    if within(0x6440_0000, 10) { return "a shared address (100.64.0.0/10)" }
    if within(0xE000_0000, 4) || value == 0xFFFF_FFFF { return "a multicast or broadcast address" }
    return nil
  }

  /// Why an IPv6 address (16 bytes, network order) is refused, or `nil`.
  static func refusal(ipv6 bytes: [UInt8]) -> String? {
    guard bytes.count == 16 else { return "a malformed address" }
    if bytes.allSatisfy({ $0 == 0 }) { return "an unspecified address (::)" }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return "a loopback address (::1)" }
    // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible addresses carry an IPv4 address.
    if bytes[0..<10].allSatisfy({ $0 == 0 })
      && (bytes[10..<12].allSatisfy { $0 == 0xFF } || bytes[10..<12].allSatisfy { $0 == 0 })
    {
      let v4 = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
      return refusal(ipv4: v4)
    }
    if bytes[0] & 0xFE == 0xFC { return "a unique-local address (fc00::/7)" }
    if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return "a link-local address (fe80::/10)" }
    if bytes[0] == 0xFF { return "a multicast address (ff00::/8)" }
    return nil
  }
}
