/// Request ids: the `X-Request-Id` every answer carries and its access-log line names, so that
/// a client's or a tier's report can be matched to one line.
enum RequestID {
  /// A new id: 16 random bytes in lower-case hex (32 characters).
  static func make() -> String {
    var generator = SystemRandomNumberGenerator()
    let high = generator.next() as UInt64
    let low = generator.next() as UInt64
    return hex(high) + hex(low)
  }

  /// Whether an incoming id may be kept: 1 to 128 bytes of letters, digits and `-_.:@/+=`
  /// (what UUIDs, nginx's `$request_id`, Varnish's and cloud load balancers' ids use).
  /// Anything else (spaces, quotes, control characters, a megabyte) is replaced.
  static func isSane(_ id: String) -> Bool {
    (1...128).contains(id.utf8.count)
      && id.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"):
          true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "@"),
          UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "="):
          true
        default: false
        }
      }
  }

  private static func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
