/// Makes valid media bodies of any size at run time, so the pipeline accepts them: a PCM WAV
/// (RIFF and data sizes exact) and a baseline-shaped JPEG (SOI, APP0, SOF0, SOS, scan data
/// without `FF`, EOI). `seed` makes bodies of the same size differ (distinct SHA-256).
enum MediaFactory {
  /// The WAV header length: RIFF, `fmt ` (16 bytes) and the `data` chunk header.
  static let wavHeaderBytes = 44

  /// Writes a stereo 16-bit 44.1 kHz PCM WAV of exactly `bytes` bytes (at least 46) to `path`.
  /// - Throws: ``BenchError`` when the file cannot be written.
  static func writeWAV(bytes: Int, seed: Int, to path: String) throws {
    let dataBytes = max(2, bytes - wavHeaderBytes) & ~1
    var header: [UInt8] = Array("RIFF".utf8)
    header += littleEndian(UInt32(dataBytes + 36))
    header += Array("WAVEfmt ".utf8)
    header += littleEndian(UInt32(16))
    header += littleEndian16(1) + littleEndian16(2)
    header += littleEndian(UInt32(44_100)) + littleEndian(UInt32(44_100 * 4))
    header += littleEndian16(4) + littleEndian16(16)
    header += Array("data".utf8) + littleEndian(UInt32(dataBytes))
    let writer = try FileWriter(path: path)
    defer { writer.close() }
    try writer.append(header)
    // The first 4 KiB depend on the seed (a distinct SHA-256); the rest repeats one
    // 1 MiB block, which keeps making hundreds of megabytes cheap.
    try writer.append(pattern(count: min(4096, dataBytes), seed: seed, avoidingFF: false))
    var remaining = dataBytes - min(4096, dataBytes)
    while remaining > 0 {
      let take = min(remaining, filler.count)
      try writer.append(take == filler.count ? filler : Array(filler[0..<take]))
      remaining -= take
    }
  }

  /// The shared PCM filler after a WAV's first 4 KiB.
  private static let filler = pattern(count: 1 << 20, seed: 1, avoidingFF: false)

  /// A JPEG of exactly `bytes` bytes (at least 160): 64×64 pixels, one component, whose scan
  /// data is filler without `FF` bytes.
  static func jpeg(bytes: Int, seed: Int) -> [UInt8] {
    var out: [UInt8] = [0xFF, 0xD8]
    out += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0x00, 0x01, 0x01, 0x00]
    out += [0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
    // Quantization table 0, and DC and AC Huffman tables 0 of one code each: the tables the scan
    // names, as libjpeg (and the validator since issue 52) requires them.
    out += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
    out += [0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x40, 0x00, 0x40, 0x01, 0x01, 0x11, 0x00]
    let oneCode: [UInt8] = [1] + [UInt8](repeating: 0, count: 15) + [0]
    out += [0xFF, 0xC4, 0x00, 0x26, 0x00] + oneCode + [0x10] + oneCode
    out += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
    let scanBytes = max(1, bytes - out.count - 2)
    out += pattern(count: scanBytes, seed: seed, avoidingFF: true)
    out += [0xFF, 0xD9]
    return out
  }

  /// An HTML page of exactly `bytes` bytes (an error or login page served in place of media).
  static func htmlPage(bytes: Int) -> [UInt8] {
    let head = Array(
      "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>\n".utf8)
    let line = Array("<p>Please sign in to continue. This page is not an image.</p>\n".utf8)
    let tail = Array("</body></html>\n".utf8)
    var out = head
    out.reserveCapacity(bytes)
    while out.count + line.count + tail.count <= bytes { out += line }
    while out.count + tail.count < bytes { out.append(0x20) }
    out += tail
    return Array(out.prefix(bytes))
  }

  /// Deterministic filler: a xorshift stream from `seed`, optionally with `FF` replaced.
  private static func pattern(count: Int, seed: Int, avoidingFF: Bool) -> [UInt8] {
    var state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 | 1
    var out = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      let byte = UInt8(truncatingIfNeeded: state >> 24)
      out[index] = avoidingFF && byte == 0xFF ? 0xFE : byte
    }
    return out
  }

  /// `value` as four little-endian bytes.
  private static func littleEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
  }

  /// `value` as two little-endian bytes.
  private static func littleEndian16(_ value: UInt16) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
  }
}
