import AttachmentKit
import CMicroHTTPD

/// What the access log says about who asked, read once when a request's headers arrive: the
/// socket's peer, the client it forwards for (from `X-Forwarded-For`, only when the peer is in
/// ``ServerConfiguration/trustedForwarders``), the user agent and range asked with, and the
/// request id the answer carries in `X-Request-Id`. Header values are capped and their control
/// characters escaped, so no client can stretch or break a log line.
struct RequestFacts: Sendable {
  /// The socket's peer address (`-` when libmicrohttpd does not say).
  var peer = "-"
  /// The client: the peer, or the address a trusted peer forwards for.
  var client = "-"
  /// The `X-Forwarded-For` a trusted peer sent (capped), else `nil`.
  var forwardedFor: String?
  /// `User-Agent` (at most ``cap`` bytes).
  var userAgent: String?
  /// `Range` (at most ``cap`` bytes).
  var range: String?
  /// The request id: a trusted peer's sane `X-Request-Id`, else a new one.
  var requestId = ""

  /// The most bytes of a header value the log keeps.
  static let cap = 512

  /// The facts of `connection`'s request (call on the handler's thread).
  static func read(_ connection: OpaquePointer?, mhd: MicroHTTPD, trusted: TrustedNetworks) -> RequestFacts {
    var facts = RequestFacts()
    let address = ak_mhd_client_address(mhd.getConnectionInfo, connection).flatMap { IPAddress($0) }
    facts.peer = address?.text ?? "-"
    facts.client = facts.peer
    facts.userAgent = mhd.header(connection, "User-Agent").map(capped)
    facts.range = mhd.header(connection, "Range").map(capped)
    let isTrusted = address.map { trusted.contains($0) } ?? false
    if isTrusted, let forwarded = mhd.header(connection, "X-Forwarded-For") {
      facts.forwardedFor = capped(forwarded)
      if let address, let client = forwardedClient(forwarded, peer: address, trusted: trusted) {
        facts.client = client.text
      }
    }
    let incoming = isTrusted ? mhd.header(connection, "X-Request-Id") : nil
    facts.requestId = incoming.flatMap { RequestID.isSane($0) ? $0 : nil } ?? RequestID.make()
    return facts
  }

  /// The client a trusted `peer` forwards for: `X-Forwarded-For` read from its right end (the
  /// hop nearest serve) past every trusted address; the first untrusted address is the client.
  /// An item that is not an address ends the walk at the hop before it (what was added after it
  /// is all that can be believed). `nil` when nothing in the header can be believed.
  static func forwardedClient(_ header: String, peer: IPAddress, trusted: TrustedNetworks) -> IPAddress? {
    guard header.utf8.count <= 4096 else { return nil }
    var believed: IPAddress?
    for item in header.split(separator: ",").reversed() {
      let text = item.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
        .reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()
      guard let address = IPAddress(String(text)) else { return believed }
      believed = address
      if !trusted.contains(address) { return address }
    }
    return believed
  }

  /// `value` cut to ``cap`` bytes (at a character boundary) with its control characters escaped.
  static func capped(_ value: String) -> String {
    var kept = Substring(value)
    if value.utf8.count > cap {
      var count = 0
      kept = value.prefix { character in
        count += character.utf8.count
        return count <= cap
      }
    }
    return Redaction.escapeControlCharacters(String(kept))
  }
}
