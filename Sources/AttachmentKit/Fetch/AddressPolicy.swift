import Glibc

/// Which peer addresses a transfer may connect to.
///
/// By default the downloader refuses every address that is not ordinary public unicast:
/// loopback, private, link-local (including the cloud metadata address 169.254.169.254),
/// unique-local, shared (CGNAT), unspecified, multicast, reserved, benchmarking, documentation
/// and IETF protocol ranges, and IPv6 addresses that embed a refused IPv4 address (IPv4-mapped
/// and -compatible, NAT64, 6to4, Teredo), so that a URL in a push payload cannot reach into the
/// network the service runs in. The check runs on the address actually connected to
/// (libcurl's open-socket callback), after DNS and on every redirect, so DNS rebinding and
/// redirects cannot dodge it.
enum AddressPolicy {
  /// Why an address is refused: the kind of network it belongs to (what a cache keeps to judge
  /// later callers) and the reason, for people.
  struct Refusal: Equatable, CustomStringConvertible {
    /// The address's class; never ``PeerAddressClass/public``.
    let peer: PeerAddressClass
    /// What the address is, e.g. "a loopback address (127.0.0.0/8)".
    let reason: String
    /// The reason.
    var description: String { reason }
  }

  /// Why an address is refused, or `nil` when it is a public address or one of `allowed`
  /// (addresses as ``bytes(of:)`` gives them).
  static func refusal(for address: UnsafePointer<sockaddr>, allowed: Set<[UInt8]> = []) -> Refusal? {
    guard let bytes = bytes(of: address) else {
      return Refusal(peer: .private, reason: "a non-IP address family")
    }
    if allowed.contains(bytes) { return nil }
    return bytes.count == 4
      ? refusal(ipv4: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) : refusal(ipv6: bytes)
  }

  /// The address of a socket address: 4 bytes for IPv4, 16 for IPv6, `nil` for anything else.
  static func bytes(of address: UnsafePointer<sockaddr>) -> [UInt8]? {
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
      address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
      }
    case AF_INET6:
      address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
      }
    default:
      nil
    }
  }

  /// The bytes of IP address literals (`"10.1.2.3"`, `"fd00::5"`), in the form ``bytes(of:)``
  /// gives; strings that are not addresses are skipped.
  static func addresses(_ literals: [String]) -> Set<[UInt8]> {
    var result: Set<[UInt8]> = []
    for literal in literals {
      var v4 = in_addr()
      var v6 = in6_addr()
      if inet_pton(AF_INET, literal, &v4) == 1 {
        result.insert(withUnsafeBytes(of: v4) { Array($0) })
      } else if inet_pton(AF_INET6, literal, &v6) == 1 {
        result.insert(withUnsafeBytes(of: v6) { Array($0) })
      }
    }
    return result
  }

  /// IPv4 ranges that are not public unicast, with their class and the reason given for each
  /// (RFC 6890 and the IANA special-purpose registry).
  private static let ipv4Ranges: [(base: UInt32, bits: UInt32, peer: PeerAddressClass, reason: String)] = [
    (0x0000_0000, 8, .private, "an unspecified address (0.0.0.0/8)"),
    (0x7F00_0000, 8, .loopback, "a loopback address (127.0.0.0/8)"),
    (0x0A00_0000, 8, .private, "a private address (10.0.0.0/8)"),
    (0xAC10_0000, 12, .private, "a private address (172.16.0.0/12)"),
    (0xC0A8_0000, 16, .private, "a private address (192.168.0.0/16)"),
    (0xA9FE_0000, 16, .linkLocal, "a link-local address (169.254.0.0/16, cloud metadata)"),
    (0x6440_0000, 10, .private, "a shared address (100.64.0.0/10)"),
    (0xC000_0000, 24, .private, "an IETF protocol address (192.0.0.0/24)"),
    (0xC000_0200, 24, .private, "a documentation address (192.0.2.0/24)"),
    (0xC633_6400, 24, .private, "a documentation address (198.51.100.0/24)"),
    (0xCB00_7100, 24, .private, "a documentation address (203.0.113.0/24)"),
    (0xC612_0000, 15, .private, "a benchmarking address (198.18.0.0/15)"),
    (0xE000_0000, 4, .private, "a multicast address (224.0.0.0/4)"),
    (0xF000_0000, 4, .private, "a reserved or broadcast address (240.0.0.0/4)"),
  ]

  /// Why an IPv4 address (host byte order) is refused, or `nil`.
  static func refusal(ipv4 value: UInt32) -> Refusal? {
    for range in ipv4Ranges {
      let mask: UInt32 = range.bits == 0 ? 0 : ~UInt32(0) << (32 - range.bits)
      if value & mask == range.base & mask { return Refusal(peer: range.peer, reason: range.reason) }
    }
    return nil
  }

  /// Why an IPv6 address (16 bytes, network order) is refused, or `nil`.
  static func refusal(ipv6 bytes: [UInt8]) -> Refusal? {
    guard bytes.count == 16 else { return Refusal(peer: .private, reason: "a malformed address") }
    func has(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
    func ipv4(at offset: Int, flipped: Bool = false) -> UInt32 {
      let value = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      return flipped ? ~value : value
    }
    func embedded(_ value: UInt32, _ what: String) -> Refusal? {
      refusal(ipv4: value).map { Refusal(peer: $0.peer, reason: "\(what) embedding \($0.reason)") }
    }
    func refused(_ peer: PeerAddressClass, _ reason: String) -> Refusal {
      Refusal(peer: peer, reason: reason)
    }
    if bytes.allSatisfy({ $0 == 0 }) { return refused(.private, "an unspecified address (::)") }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 {
      return refused(.loopback, "a loopback address (::1)")
    }
    // IPv4-compatible (::a.b.c.d), IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated
    // (::ffff:0:a.b.c.d) addresses carry an IPv4 address in their last four bytes.
    let zeroPrefix = bytes[0..<8].allSatisfy { $0 == 0 }
    if zeroPrefix
      && (bytes[8..<12].allSatisfy { $0 == 0 } || bytes[8..<12].elementsEqual([0, 0, 0xFF, 0xFF])
        || bytes[8..<12].elementsEqual([0xFF, 0xFF, 0, 0]))
    {
      return refusal(ipv4: ipv4(at: 12))
    }
    // NAT64 well-known prefix (RFC 6052): 64:ff9b::/96 with the IPv4 address last.
    if has([0x00, 0x64, 0xFF, 0x9B]) && bytes[4..<12].allSatisfy({ $0 == 0 }) {
      return embedded(ipv4(at: 12), "a NAT64 address (64:ff9b::/96)")
    }
    // Local-use NAT64 (RFC 8215): its embedding is the operator's choice, and it only ever
    // reaches the operator's own network.
    if has([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) {
      return refused(.private, "a local-use NAT64 address (64:ff9b:1::/48)")
    }
    // 6to4 (RFC 3056): 2002:a.b.c.d::/48.
    if has([0x20, 0x02]) { return embedded(ipv4(at: 2), "a 6to4 address (2002::/16)") }
    // Teredo (RFC 4380): 2001:0::/32, the server's IPv4 in bytes 4–7 and the client's,
    // bit-inverted, in bytes 12–15. Either one being refused refuses the address.
    if has([0x20, 0x01, 0x00, 0x00]) {
      return embedded(ipv4(at: 4), "a Teredo address (2001::/32, server)")
        ?? embedded(ipv4(at: 12, flipped: true), "a Teredo address (2001::/32, client)")
    }
    if has([0x20, 0x01, 0x0D, 0xB8]) { return refused(.private, "a documentation address (2001:db8::/32)") }
    if has([0x01, 0x00, 0, 0, 0, 0, 0, 0]) { return refused(.private, "a discard-only address (100::/64)") }
    if bytes[0] & 0xFE == 0xFC { return refused(.private, "a unique-local address (fc00::/7)") }
    if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 {
      return refused(.linkLocal, "a link-local address (fe80::/10)")
    }
    if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 {
      return refused(.private, "a site-local address (fec0::/10)")
    }
    if bytes[0] == 0xFF { return refused(.private, "a multicast address (ff00::/8)") }
    return nil
  }

  /// Why a URL's host is refused before any connection is made, or `nil`.
  ///
  /// Used where the connected address is not the destination's (through a proxy, which
  /// resolves names itself): an IP literal in any form the proxy may parse (dotted, decimal,
  /// hex or octal IPv4, bracketed IPv6) is judged like a connected address, and `localhost`
  /// names are refused. A DNS name that resolves to a private address cannot be seen here.
  static func refusal(host rawHost: Substring) -> Refusal? {
    // The host as libcurl uses it: its URL parser decodes percent-escapes in the host, so
    // `%31%32%37.0.0.1` connects to 127.0.0.1 and is judged as that.
    guard let decoded = percentDecoded(rawHost) else {
      return Refusal(peer: .private, reason: "a host whose percent-escapes decode to no valid name")
    }
    var host = decoded.lowercased()
    if host.hasSuffix(".") { host.removeLast() }
    if host == "localhost" || host.hasSuffix(".localhost") {
      return Refusal(peer: .loopback, reason: "a loopback name (\(host))")
    }
    if host.hasPrefix("["), host.hasSuffix("]") {
      var literal = String(host.dropFirst().dropLast())
      if let zone = literal.firstIndex(of: "%") { literal = String(literal[..<zone]) }
      var address = in6_addr()
      guard inet_pton(AF_INET6, literal, &address) == 1 else {
        return Refusal(peer: .private, reason: "a malformed IPv6 literal")
      }
      return refusal(ipv6: withUnsafeBytes(of: address) { Array($0) })
    }
    // inet_aton accepts every IPv4 spelling resolvers do (127.1, 2130706433, 0x7f.0.0.1).
    var address = in_addr()
    if inet_aton(host, &address) != 0 {
      return refusal(ipv4: UInt32(bigEndian: address.s_addr))
    }
    return nil
  }

  /// `host` with its percent-escapes decoded (once, as libcurl does), or `nil` when they decode
  /// to a NUL, a control character or bytes that are not UTF-8 (no resolver takes those).
  static func percentDecoded(_ host: Substring) -> String? {
    guard host.contains("%") else { return String(host) }
    var bytes: [UInt8] = []
    var iterator = Array(host.utf8).makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next().flatMap(Hex.value(of:)),
        let low = iterator.next().flatMap(Hex.value(of:))
      else {
        return nil
      }
      bytes.append(high << 4 | low)
    }
    guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }),
      let text = String(validating: bytes, as: UTF8.self)
    else { return nil }
    return text
  }
}
