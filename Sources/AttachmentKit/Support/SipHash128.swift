/// SipHash-2-4 with a 128-bit output (Aumasson and Bernstein, "SipHash: a fast short-input
/// PRF"): a keyed hash, so that without the key no one can build inputs whose hashes collide.
///
/// It names the cache's index records by URL (``CacheRecordKey``). The hit path must not load
/// libcrypto, and OpenSSL offers SipHash only through its MAC interface there, so it is written
/// here, in the paper's 40 lines; the tests check it against the reference vectors and against
/// `openssl mac SIPHASH` on many inputs and keys.
struct SipHash128: Sendable {
  private let k0: UInt64
  private let k1: UInt64

  /// A hash keyed by `key`, 16 bytes (the first 8 are k0, little-endian). `nil` for another size.
  init?(key: [UInt8]) {
    guard key.count == 16 else { return nil }
    k0 = Self.littleEndian(key[0..<8])
    k1 = Self.littleEndian(key[8..<16])
  }

  /// The 16 bytes of the hash of `message`, in the reference's output order.
  func hash(_ message: some Collection<UInt8>) -> [UInt8] {
    var state = State(
      v0: k0 ^ 0x736f_6d65_7073_6575, v1: k1 ^ 0x646f_7261_6e64_6f6d ^ 0xee,
      v2: k0 ^ 0x6c79_6765_6e65_7261, v3: k1 ^ 0x7465_6462_7974_6573)
    var word: UInt64 = 0
    var filled = 0
    for byte in message {
      word |= UInt64(byte) << (8 * UInt64(filled))
      filled += 1
      if filled == 8 {
        state.compress(word)
        word = 0
        filled = 0
      }
    }
    state.compress(word | UInt64(truncatingIfNeeded: message.count) << 56)
    state.v2 ^= 0xee
    state.rounds(4)
    let first = state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    state.v1 ^= 0xdd
    state.rounds(4)
    let second = state.v0 ^ state.v1 ^ state.v2 ^ state.v3
    return Self.bytes(first) + Self.bytes(second)
  }

  /// The hash of `message` as 32 lower-case hex digits.
  func hex(_ message: some Collection<UInt8>) -> String { Hex.encode(hash(message)) }

  private struct State {
    var v0, v1, v2, v3: UInt64

    mutating func compress(_ word: UInt64) {
      v3 ^= word
      rounds(2)
      v0 ^= word
    }

    mutating func rounds(_ count: Int) {
      for _ in 0..<count {
        v0 &+= v1
        v1 = v1.rotatedLeft(13) ^ v0
        v0 = v0.rotatedLeft(32)
        v2 &+= v3
        v3 = v3.rotatedLeft(16) ^ v2
        v0 &+= v3
        v3 = v3.rotatedLeft(21) ^ v0
        v2 &+= v1
        v1 = v1.rotatedLeft(17) ^ v2
        v2 = v2.rotatedLeft(32)
      }
    }
  }

  private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
  }

  private static func bytes(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
  }
}

extension UInt64 {
  fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { self << count | self >> (64 - count) }
}
