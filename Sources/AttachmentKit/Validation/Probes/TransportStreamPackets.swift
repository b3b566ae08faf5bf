/// MPEG transport streams recognised by their packet structure, whatever their first packet
/// carries and however their packets are framed.
///
/// libmagic 5.44 names a transport stream only when its first packet is a PAT; `ffmpeg` writes
/// an SDT first, and cameras write M2TS (AVCHD `.mts`, `.m2ts`), whose 188-byte packets each
/// follow a 4-byte time code. Both were "not any accepted format", so nothing rescued them. A
/// stream is named here when at least ``minimumPackets`` packets in a row (up to
/// ``packetsChecked``) start with the sync byte `0x47` at one of the three packet sizes, from
/// any offset within the first packet (a stream cut between packets), and every one of them has
/// a valid adaptation field control (a run of `G`s is not a stream).
enum TransportStreamPackets {
  /// The MIME type a transport stream is named by (libmagic's own name for one).
  static let mime = "video/MP2T"

  /// The packet sizes: 188 bytes (ISO/IEC 13818-1), 192 (M2TS: a 4-byte time code before
  /// each packet), 204 (DVB: 16 bytes of Reed-Solomon parity after each).
  static let packetSizes = [188, 192, 204]

  /// Packets that must be seen in a row (the window's first 4 KiB hold 21 of 188 bytes).
  static let minimumPackets = 3

  /// Packets checked at most.
  static let packetsChecked = 16

  /// The packet size of the transport stream `bytes` begin, or `nil` when they do not begin
  /// one.
  static func packetSize(of bytes: UnsafeRawBufferPointer) -> Int? {
    for size in packetSizes {
      for offset in 0..<min(size, bytes.count) where bytes[offset] == 0x47 {
        let available = (bytes.count - offset - 4) / size + 1
        let count = min(available, packetsChecked)
        guard count >= minimumPackets else { break }
        if (0..<count).allSatisfy({ isPacketStart(bytes, at: offset + $0 * size) }) { return size }
      }
    }
    return nil
  }

  /// Whether a packet header starts at `index`: the sync byte, and an adaptation field control
  /// other than the reserved `00`.
  private static func isPacketStart(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Bool {
    index + 3 < bytes.count && bytes[index] == 0x47 && (bytes[index + 3] >> 4) & 0x3 != 0
  }
}
