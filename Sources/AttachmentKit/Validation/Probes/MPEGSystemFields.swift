/// The MPEG systems layer's fixed fields: pack headers (with the SCR) and PES time stamps.
enum MPEGSystemFields {
  /// The result of reading a pack header.
  enum Pack {
    /// A valid pack header of `length` bytes, its SCR base (90 kHz), the syntax version and
    /// the declared mux rate (in units of 50 bytes per second).
    case header(length: Int, clock: UInt64, isMPEG2: Bool, muxRate: Int)
    /// The bytes end inside it.
    case cut
    /// A marker bit or the version prefix is wrong.
    case invalid
  }

  /// Reads the pack header whose start code (00 00 01 BA) is at `offset`: MPEG-2 ('01' prefix,
  /// 14 bytes plus stuffing) or MPEG-1 ('0010' prefix, 12 bytes), checking every marker bit.
  static func pack(_ reader: ByteReader, at offset: Int) -> Pack {
    guard reader.matches([0, 0, 1, 0xBA], at: offset) else { return .invalid }
    guard let first = reader.u8(offset + 4) else { return .cut }
    if first & 0xC0 == 0x40 {
      guard let b = reader.bytes(at: offset, count: 14) else { return .cut }
      guard b[4] & 0x04 != 0, b[6] & 0x04 != 0, b[8] & 0x04 != 0, b[9] & 0x01 != 0,
        b[12] & 0x03 == 0x03
      else { return .invalid }
      let length = 14 + Int(b[13] & 0x07)
      guard reader.contains(offset, length) else { return .cut }
      var clock = UInt64(b[4] >> 3 & 0x07) << 30 | UInt64(b[4] & 0x03) << 28
      clock |= UInt64(b[5]) << 20 | UInt64(b[6] >> 3) << 15 | UInt64(b[6] & 0x03) << 13
      clock |= UInt64(b[7]) << 5 | UInt64(b[8] >> 3)
      let rate = Int(b[10]) << 14 | Int(b[11]) << 6 | Int(b[12] >> 2)
      return .header(length: length, clock: clock, isMPEG2: true, muxRate: rate)
    }
    if first & 0xF0 == 0x20 {
      guard let b = reader.bytes(at: offset, count: 12) else { return .cut }
      guard b[4] & 0x01 != 0, b[6] & 0x01 != 0, b[8] & 0x01 != 0, b[9] & 0x80 != 0,
        b[11] & 0x01 != 0
      else { return .invalid }
      let rate = Int(b[9] & 0x7F) << 15 | Int(b[10]) << 7 | Int(b[11] >> 1)
      return .header(length: 12, clock: timestamp(Array(b[4..<9])) ?? 0, isMPEG2: false, muxRate: rate)
    }
    return .invalid
  }

  /// Decodes a 33-bit time stamp from its 5-byte form (PTS, DTS, MPEG-1 SCR): 3+15+15 bits
  /// with marker bits set; nil when a marker is 0 or there are not 5 bytes.
  static func timestamp(_ b: [UInt8]) -> UInt64? {
    guard b.count == 5, b[0] & 0x01 != 0, b[2] & 0x01 != 0, b[4] & 0x01 != 0 else { return nil }
    var value = UInt64(b[0] >> 1 & 0x07) << 30 | UInt64(b[1]) << 22 | UInt64(b[2] >> 1) << 15
    value |= UInt64(b[3]) << 7 | UInt64(b[4] >> 1)
    return value
  }

  /// The offset of the payload of the PES packet at `offset` ending at `end`, in either syntax
  /// (after the MPEG-2 PES header's data, or after MPEG-1 stuffing, STD buffer and time
  /// stamps); nil when it lies outside the packet.
  static func payloadStart(_ reader: ByteReader, packetAt offset: Int, end: Int) -> Int? {
    guard let first = reader.u8(offset + 6) else { return nil }
    var position: Int
    if first & 0xC0 == 0x80 {
      guard let length = reader.u8(offset + 8) else { return nil }
      position = offset + 9 + Int(length)
    } else {
      position = offset + 6
      var stuffing = 0
      while reader.u8(position) == 0xFF, stuffing < 16 {
        position += 1
        stuffing += 1
      }
      if let byte = reader.u8(position), byte & 0xC0 == 0x40 { position += 2 }
      guard let byte = reader.u8(position) else { return nil }
      switch byte & 0xF0 {
      case 0x20: position += 5
      case 0x30: position += 10
      default: position += 1  // 0x0F: no time stamps
      }
    }
    return position < end ? position : nil
  }

  /// The PTS of the PES packet at `offset` ending at `end`, in either syntax (MPEG-2 PES header
  /// '10' flags, or MPEG-1 stuffing, STD buffer and '001x' prefix); nil when it has none.
  static func presentationTime(_ reader: ByteReader, packetAt offset: Int, end: Int) -> UInt64? {
    guard let first = reader.u8(offset + 6) else { return nil }
    if first & 0xC0 == 0x80 {
      guard let flags = reader.u8(offset + 7), flags & 0x80 != 0, offset + 14 <= end,
        let bytes = reader.bytes(at: offset + 9, count: 5), bytes[0] >> 4 & 0x02 != 0
      else { return nil }
      return timestamp(bytes)
    }
    var position = offset + 6
    var stuffing = 0
    while reader.u8(position) == 0xFF, stuffing < 16 {
      position += 1
      stuffing += 1
    }
    if let byte = reader.u8(position), byte & 0xC0 == 0x40 { position += 2 }
    guard let byte = reader.u8(position), byte & 0xE0 == 0x20, position + 5 <= end,
      let bytes = reader.bytes(at: position, count: 5)
    else { return nil }
    return timestamp(bytes)
  }
}
