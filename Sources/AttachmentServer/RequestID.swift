import Synchronization

/// Request ids: the `X-Request-Id` every answer carries and its access-log line names, so that
/// a client's or a tier's report can be matched to one line.
enum RequestID {
  /// A new id: 32 lower-case hex digits that look random. Unique within the process (the first
  /// half is a bijection of a counter), unlike any other process's (each starts from its own
  /// random seed), and made without a system call: two `getrandom` calls per request were 3 %
  /// of serve's CPU on cache hits. Not a secret (nothing is authorized by it).
  static func make() -> String {
    let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
    return hex(mix(count &+ seed.0)) + hex(mix(count ^ seed.1))
  }

  /// The process's random starting point, drawn once.
  private static let seed: (UInt64, UInt64) = {
    var generator = SystemRandomNumberGenerator()
    return (generator.next(), generator.next())
  }()
  private static let counter = Atomic<UInt64>(0)

  /// SplitMix64's finalizer: a bijection of 64-bit values that spreads every input bit.
  private static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
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
