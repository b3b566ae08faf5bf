import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The private-network guard: on by default, checked on the address actually connected to.
@Suite("Private-network guard", .threadOfItsOwn)
struct AddressPolicyTests {
  @Test("loopback, private, link-local, metadata and unspecified addresses are refused; public ones pass")
  func classification() {
    func v4(_ text: String) -> UInt32 {
      text.split(separator: ".").compactMap { UInt32($0) }.reduce(0) { $0 << 8 | $1 }
    }
    for blocked in [
      "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0", "100.64.0.1", "224.0.0.1", "255.255.255.255",
    ] {
      #expect(AddressPolicy.refusal(ipv4: v4(blocked)) != nil, "\(blocked)")
    }
    for allowed in ["8.8.8.8", "172.32.0.1", "192.169.0.1", "1.1.1.1", "100.128.0.1"] {
      #expect(AddressPolicy.refusal(ipv4: v4(allowed)) == nil, "\(allowed)")
    }
    func v6(_ prefix: [UInt8], _ suffix: [UInt8] = []) -> [UInt8] {
      prefix + [UInt8](repeating: 0, count: 16 - prefix.count - suffix.count) + suffix
    }
    #expect(AddressPolicy.refusal(ipv6: v6([], [1])) != nil)  // ::1
    #expect(AddressPolicy.refusal(ipv6: v6([])) != nil)  // ::
    #expect(AddressPolicy.refusal(ipv6: v6([0xFD, 0x12])) != nil)  // fd12::
    #expect(AddressPolicy.refusal(ipv6: v6([0xFE, 0x80])) != nil)  // fe80::
    #expect(AddressPolicy.refusal(ipv6: v6([], [0xFF, 0xFF, 10, 0, 0, 1])) != nil)  // ::ffff:10.0.0.1
    #expect(AddressPolicy.refusal(ipv6: v6([], [0xFF, 0xFF, 169, 254, 169, 254])) != nil)
    #expect(AddressPolicy.refusal(ipv6: v6([0x20, 0x01, 0x48, 0x60])) == nil)  // 2001:4860::
    #expect(AddressPolicy.refusal(ipv6: v6([], [0xFF, 0xFF, 8, 8, 8, 8])) == nil)
  }

  @Test("special IPv4 ranges are refused: IETF protocol, benchmarking, documentation, reserved")
  func specialIPv4Ranges() {
    for blocked in [
      "192.0.0.1", "192.0.0.255", "198.18.0.1", "198.19.255.255", "240.0.0.1", "254.1.2.3",
      "192.0.2.7", "198.51.100.7", "203.0.113.7",
    ] {
      #expect(AddressPolicy.refusal(ipv4: Self.v4(blocked)) != nil, "\(blocked)")
    }
    for allowed in ["192.0.1.255", "192.1.0.1", "198.17.255.255", "198.20.0.1", "223.255.255.254"] {
      #expect(AddressPolicy.refusal(ipv4: Self.v4(allowed)) == nil, "\(allowed)")
    }
  }

  @Test("IPv6 addresses that embed IPv4 are judged by the IPv4 inside: NAT64, 6to4, Teredo, mapped")
  func embeddedIPv4() {
    func refused(_ text: String) -> Bool { AddressPolicy.refusal(ipv6: Self.v6(text)) != nil }
    // NAT64 well-known prefix: 64:ff9b::a.b.c.d
    #expect(refused("64:ff9b::7f00:1"))  // 127.0.0.1
    #expect(refused("64:ff9b::a9fe:a9fe"))  // 169.254.169.254
    #expect(refused("64:ff9b::c0a8:101"))  // 192.168.1.1
    #expect(!refused("64:ff9b::808:808"))  // 8.8.8.8
    #expect(refused("64:ff9b:1::808:808"))  // local-use NAT64: always the operator's own network
    // 6to4: 2002:a.b.c.d::/48
    #expect(refused("2002:a00:1::1"))  // 10.0.0.1
    #expect(refused("2002:7f00:1::"))  // 127.0.0.1
    #expect(!refused("2002:808:808::1"))
    // Teredo: server IPv4 in bytes 4-7, client IPv4 inverted in bytes 12-15
    #expect(refused("2001:0:a00:1::808:808"))  // server 10.0.0.1
    #expect(refused("2001:0:808:808::80ff:fffe"))  // client ~(0x7f000001) = 127.0.0.1
    #expect(!refused("2001:0:808:808::f7f7:f7f7"))  // client 8.8.8.8
    // IPv4-translated and -compatible forms
    #expect(refused("::ffff:0:a00:1"))
    #expect(refused("::a00:1"))
    // other non-public IPv6
    #expect(refused("2001:db8::1"))
    #expect(refused("100::1"))
    #expect(refused("fec0::1"))
    #expect(!refused("2001:4860:4860::8888"))
    #expect(!refused("2606:4700::1111"))
  }

  @Test("hosts judged without DNS (the proxy path): every IPv4 spelling, bracketed IPv6, localhost names")
  func hostLiterals() {
    for blocked in [
      "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "10.1", "[::1]", "[fe80::1%25eth0]",
      "[64:ff9b::a9fe:a9fe]", "localhost", "LOCALHOST", "x.localhost", "localhost.", "[not-an-address]",
    ] {
      #expect(AddressPolicy.refusal(host: Substring(blocked)) != nil, "\(blocked)")
    }
    for allowed in [
      "example.com", "8.8.8.8", "[2001:4860:4860::8888]", "localhost.example.com", "cdn-127.net",
    ] {
      #expect(AddressPolicy.refusal(host: Substring(allowed)) == nil, "\(allowed)")
    }
  }

  private static func v4(_ text: String) -> UInt32 {
    var address = in_addr()
    _ = inet_pton(AF_INET, text, &address)
    return UInt32(bigEndian: address.s_addr)
  }

  private static func v6(_ text: String) -> [UInt8] {
    var address = in6_addr()
    _ = inet_pton(AF_INET6, text, &address)
    return withUnsafeBytes(of: address) { Array($0) }
  }

  @Test("by default a loopback server is refused with blocked_address, by IP or by name, and nothing is left")
  func loopbackRefused() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.jpg", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("guard")
    defer { scratch.remove() }
    for url in [server.url("/a.jpg"), "http://localhost:\(server.port)/a.jpg"] {
      let start = ContinuousClock.now
      defer { #expect(ContinuousClock.now - start <= .seconds(3) + deadlineMargin, "\(url)") }
      do {
        _ = try await Downloader().download(
          DownloadRequest(url: url, directory: scratch.path), timeout: .seconds(3))
        Issue.record("\(url) should be blocked")
      } catch {
        #expect(error.code == .blockedAddress, "\(url): \(error)")
      }
    }
    #expect(server.totalConnections == 0)  // refused before connecting
    #expect(scratch.contents().isEmpty)
  }
}
