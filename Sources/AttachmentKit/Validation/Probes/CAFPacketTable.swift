/// A CAF packet table ('pakt') read as FFmpeg's CAF demuxer reads it, for packets of variable
/// size (a 'desc' bytes-per-packet of 0, as ALAC and AAC have): its packet count, then one
/// variable-length size per packet (and one frame count when frames per packet is 0 too). Its
/// entries must lie inside the chunk (else "error reading packet table": the header does not
/// open), and the sizes must add up to the data chunk's bytes: a size changed by damage puts
/// every later packet out of place (decoding fails) or past the data (an input/output error).
///
/// Time is linear in the chunk's bytes (a size takes at least one), memory constant.
enum CAFPacketTable {
  /// The problem with the packet table `table` (its payload's offset and length; nil when the
  /// file has none) of a file whose packets vary (`description`'s bytes per packet is 0), with
  /// `dataBytes` of audio; nil when it holds or the packets do not vary.
  static func problem(
    _ reader: ByteReader, _ table: (payload: Int, length: Int)?, dataBytes: Int,
    description: CAFProbe.Description
  ) -> String? {
    guard description.bytesPerPacket == 0, let table else { return nil }
    return problem(
      reader, payload: table.payload, length: table.length, dataBytes: dataBytes,
      framesPerPacket: description.framesPerPacket)
  }

  /// The problem with the packet table whose payload of `length` bytes starts at `payload`, for
  /// a data chunk of `dataBytes` (its edit count left out) and `framesPerPacket` from 'desc';
  /// nil when it holds.
  static func problem(
    _ reader: ByteReader, payload: Int, length: Int, dataBytes: Int, framesPerPacket: Int
  ) -> String? {
    guard length >= 24, let declared = reader.u64be(payload) else {
      return "CAF packet table is \(length) bytes, too short for its header"
    }
    let end = payload + length
    var position = payload + 24
    var total = 0
    var packets: UInt64 = 0
    while packets < declared {
      guard let size = descriptorLength(reader, at: &position, end: end) else {
        return
          "CAF packet table declares \(declared) packets; its \(length) bytes hold \(packets) (error reading packet table)"
      }
      if framesPerPacket == 0, descriptorLength(reader, at: &position, end: end) == nil {
        return "CAF packet table ends inside packet \(packets + 1)'s frame count (error reading packet table)"
      }
      total += size
      packets += 1
    }
    guard total == dataBytes else {
      return
        "CAF packet table's \(packets) packets add up to \(total) bytes; the data chunk holds \(dataBytes)"
    }
    return nil
  }

  /// An MPEG-4 descriptor length (up to four 7-bit bytes, high bit set on all but the last) at
  /// `position`, moving past it; nil when it does not end before `end`.
  private static func descriptorLength(_ reader: ByteReader, at position: inout Int, end: Int) -> Int? {
    var value = 0
    for _ in 0..<4 {
      guard position < end, let byte = reader.u8(position) else { return nil }
      position += 1
      value = value << 7 | Int(byte & 0x7F)
      if byte & 0x80 == 0 { return value }
    }
    return value
  }
}
