/// FNV-1a with 128 bits (the parameters of the FNV reference): a fast hash for naming files by
/// a key, with no library to load.
///
/// It is not cryptographic, and is not used where that matters: content is named by its
/// SHA-256 (libcrypto), and a cache record also stores the URL it answers, so two URLs whose
/// keys collided would only take turns in one index slot (a miss), never share content.
enum FNV1a128 {
  private static let offsetBasis: UInt128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
  private static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

  /// The hash of `bytes` as 32 lower-case hex digits.
  static func hex(_ bytes: some Sequence<UInt8>) -> String {
    var hash = offsetBasis
    for byte in bytes {
      hash ^= UInt128(byte)
      hash = hash &* prime
    }
    let high = UInt64(truncatingIfNeeded: hash >> 64)
    let low = UInt64(truncatingIfNeeded: hash)
    return Hex.encode(
      withUnsafeBytes(of: high.bigEndian) { Array($0) } + withUnsafeBytes(of: low.bigEndian) { Array($0) })
  }
}
