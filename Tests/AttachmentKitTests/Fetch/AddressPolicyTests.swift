import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The private-network guard: on by default, checked on the address actually connected to.
@Suite("Private-network guard")
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

  @Test("by default a loopback server is refused with blocked_address, by IP or by name, and nothing is left")
  func loopbackRefused() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.jpg", body: Array("hello".utf8))
    let scratch = try ScratchDirectory("guard")
    defer { scratch.remove() }
    for url in [server.url("/a.jpg"), "http://localhost:\(server.port)/a.jpg"] {
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
