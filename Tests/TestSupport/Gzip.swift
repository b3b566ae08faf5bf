/// A minimal gzip writer: one gzip member whose deflate stream uses only "stored"
/// (uncompressed) blocks. Valid for any decoder; not smaller than the input.
public enum Gzip {
  /// Largest payload of one stored deflate block.
  static let maxStoredBlock = 65_535

  /// Wraps `data` in a gzip member (RFC 1952): header, stored deflate blocks
  /// (RFC 1951), CRC-32 and ISIZE, both little-endian.
  public static func storedMember(_ data: [UInt8]) -> [UInt8] {
    // ID1 ID2, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255 (unknown).
    var out: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF]
    var offset = 0
    repeat {
      let length = min(maxStoredBlock, data.count - offset)
      let isFinal = offset + length == data.count
      out.append(isFinal ? 0x01 : 0x00)  // BFINAL bit, BTYPE=00, padded to a byte.
      let len = UInt16(length)
      out += littleEndian(len) + littleEndian(~len)
      out += data[offset..<(offset + length)]
      offset += length
    } while offset < data.count
    out += littleEndian(crc32(data))
    out += littleEndian(UInt32(truncatingIfNeeded: data.count))
    return out
  }

  /// The CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of `data`.
  public static func crc32(_ data: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data {
      crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }
    return ~crc
  }

  private static let crcTable: [UInt32] = (0..<256).map { index in
    var value = UInt32(index)
    for _ in 0..<8 {
      value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1
    }
    return value
  }

  private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
  }
}
