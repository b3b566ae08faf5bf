import CCurl
import Glibc

/// Which kind of network a response came from, as the address policy sees it: what a cache
/// needs to keep so a later hit can be judged against another caller's address policy.
public enum PeerAddressClass: String, Sendable, Codable, CaseIterable {
  /// A public address: every policy accepts it.
  case `public`
  /// A loopback address (127.0.0.0/8, ::1).
  case loopback
  /// A private network: RFC 1918, unique-local, shared (CGNAT), unspecified, multicast and
  /// every other range the address policy refuses that is neither loopback nor link-local.
  case `private`
  /// A link-local address (169.254.0.0/16 with the cloud metadata address, fe80::/10).
  case linkLocal = "link-local"

  /// Whether a caller that does not allow private networks may use what came from here.
  public var isPublic: Bool { self == .public }

  /// The class of a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"::1"`), decided by
  /// `AddressPolicy` (the same classifier that refuses connections), or `nil` when the text
  /// is not a numeric address.
  public init?(numericAddress text: String) {
    var storage = sockaddr_storage()
    let parsed = withUnsafeMutablePointer(to: &storage) { pointer -> Bool in
      if text.contains(":") {
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
          v6.pointee.sin6_family = sa_family_t(AF_INET6)
          return inet_pton(AF_INET6, text, &v6.pointee.sin6_addr) == 1
        }
      }
      return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
        v4.pointee.sin_family = sa_family_t(AF_INET)
        return inet_pton(AF_INET, text, &v4.pointee.sin_addr) == 1
      }
    }
    guard parsed else { return nil }
    let refusal = withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { AddressPolicy.refusal(for: $0) }
    }
    self = refusal?.peer ?? .public
  }

  /// The class of the final connection of a finished transfer (`CURLINFO_PRIMARY_IP`), or
  /// `nil` when libcurl does not report it. Engine thread only.
  static func ofPrimaryIP(_ easy: UnsafeMutableRawPointer) -> PeerAddressClass? {
    var address: UnsafeMutablePointer<CChar>?
    guard ak_easy_getinfo_string(easy, CURLINFO_PRIMARY_IP, &address) == CURLE_OK, let address else {
      return nil
    }
    return PeerAddressClass(numericAddress: String(cString: address))
  }
}
