/// The addresses of a trusted tier in front of serve (`--trust-forwarded-from`): only a
/// request from one of them may say, in `X-Forwarded-For`, whom it forwards for, and only its
/// `X-Request-Id` is kept. Empty (the default) trusts no one: every request's client is its
/// socket's peer.
public struct TrustedNetworks: Sendable, Equatable {
  /// One network: an address and how many of its leading bits must match.
  struct Network: Sendable, Equatable {
    let address: IPAddress
    let prefixBits: Int

    func contains(_ candidate: IPAddress) -> Bool {
      guard candidate.bytes.count == address.bytes.count else { return false }
      var bits = prefixBits
      for (mine, theirs) in zip(address.bytes, candidate.bytes) where bits > 0 {
        let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
        if mine & mask != theirs & mask { return false }
        bits -= 8
      }
      return true
    }
  }

  let networks: [Network]

  /// No trusted tier.
  public init() {
    networks = []
  }

  /// The networks of a comma-separated list of addresses and CIDR blocks
  /// (`10.0.0.0/8, 192.0.2.7, fd00::/8`); spaces around items are ignored.
  /// - Throws: ``Problem`` naming the first item that is not an IPv4 or IPv6 address, with an
  ///   optional prefix length within the address's bits.
  public init(parsing list: String) throws(Problem) {
    var parsed: [Network] = []
    for item in list.split(separator: ",") {
      let text = item.trimmingPrefix(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()
      let word = String(text)
      let parts = word.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
      guard let address = IPAddress(parts[0]) else { throw Problem(item: word) }
      let width = address.bytes.count * 8
      var bits = width
      if parts.count == 2 {
        guard let prefix = Int(parts[1]), (0...width).contains(prefix), parts[1].allSatisfy(\.isASCII)
        else { throw Problem(item: word) }
        bits = prefix
      }
      parsed.append(Network(address: address, prefixBits: bits))
    }
    networks = parsed
  }

  /// An item of the list that is not an address or a CIDR block.
  public struct Problem: Error, Sendable {
    /// The item as written.
    public let item: String
  }

  /// Whether no network is trusted.
  public var isEmpty: Bool { networks.isEmpty }

  /// Whether `address` is in one of the networks.
  func contains(_ address: IPAddress) -> Bool {
    networks.contains { $0.contains(address) }
  }
}
