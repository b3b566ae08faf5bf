/// Structural check of a PNG: the signature, IHDR first (dimensions, bit depth and colour type
/// that agree), and on the whole file a chunk walk with every chunk inside the file, IDAT
/// present, and IEND. An `acTL` chunk (APNG) gives `frames`.
///
/// CRCs are not checked except IHDR's and PLTE's (on the whole file): decoders differ in how
/// they treat a bad CRC on ancillary chunks, the IHDR check is enough to catch corruption of
/// the header the dimensions come from, and libpng refuses a palette whose CRC is wrong. On the whole file the IDAT chunks' zlib stream is inflated
/// (and dropped as it comes: see ``PNGImageData``), so image data a decoder cannot inflate, or
/// that holds fewer bytes than the rows IHDR describes, is refused.
enum PNGProbe {
  /// The 8-byte PNG signature.
  static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

  /// Identifies a PNG from a prefix: signature and a valid IHDR, then chunks whose types are
  /// letters up to the first IDAT or the end of the prefix. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    walk(reader, toEnd: false).identified
  }

  /// Checks a whole PNG: IHDR (with its CRC), the chunk walk inside the file, PLTE for
  /// palette images, IDAT (its zlib stream inflating to the rows IHDR implies), and IEND.
  /// Truncated when the file ends before IEND; malformed on a bad header, chunk type or
  /// length, a missing IDAT, or image data that does not inflate or is short.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    walk(reader, toEnd: true).inspected
  }

  /// Chunk types read here.
  private static let ihdr = ProbeMath.code("IHDR")
  private static let plte = ProbeMath.code("PLTE")
  private static let idat = ProbeMath.code("IDAT")
  private static let iend = ProbeMath.code("IEND")
  private static let actl = ProbeMath.code("acTL")

  /// Walks the chunks from the signature; with `toEnd` false stops at the first IDAT.
  private static func walk(_ reader: ByteReader, toEnd: Bool) -> ProbeWalk {
    guard reader.matches(signature, at: 0) else { return .invalid("no PNG signature") }
    var report = ProbeReport(format: .png)
    guard let colourType = reader.u8(25), reader.contains(0, 29) else {
      return toEnd ? .cut(report, "PNG ends inside IHDR") : .invalid("PNG prefix too short")
    }
    if let problem = header(reader, into: &report, checkCRC: toEnd) { return .invalid(problem) }
    var position = 8
    var sawPalette = false
    var sawData = false
    var imageData = toEnd ? PNGImageData(reader) : nil
    for _ in 0..<ProbeLimits.maxSteps {
      guard let length = reader.u32be(position), let type = reader.u32be(position + 4) else {
        return .cut(report, "PNG ends before its IEND chunk")
      }
      guard length <= 0x7FFF_FFFF else { return .invalid("PNG chunk length over 2^31-1") }
      guard isChunkType(type) else { return .invalid("PNG has a chunk type that is not letters") }
      if position > 8 && type == ihdr { return .invalid("PNG has a second IHDR") }
      if type == iend {
        guard sawData else { return .invalid("PNG has no IDAT chunk") }
        if let problem = imageData?.finish() { return .invalid(problem) }
        let trailing = reader.count - (position + 12)
        if trailing > 0 { report.notes.append("\(trailing) bytes after the PNG IEND chunk (ignored)") }
        return reader.contains(position, 12) ? .complete(report) : .cut(report, "PNG ends inside IEND")
      }
      if type == plte {
        sawPalette = true
        if toEnd, let problem = palette(reader, at: position, length: Int(length), colourType: colourType) {
          return .invalid(problem)
        }
      }
      if type == actl, let frames = reader.u32be(position + 8) { report.frames = Int(frames) }
      if type == idat {
        guard colourType != 3 || sawPalette else {
          return .invalid("PNG palette image has no PLTE before IDAT")
        }
        sawData = true
        if !toEnd { return .complete(report) }
      }
      // 12 = length, type and CRC; length < 2^31 so the sum cannot overflow.
      let end = position + 12 + Int(length)
      guard end <= reader.count else { return .cut(report, "PNG ends inside a chunk") }
      if type == idat, let problem = imageData?.add(reader, at: position + 8, length: Int(length)) {
        return .invalid(problem)
      }
      position = end
    }
    return .invalid("PNG has too many chunks")
  }

  /// Validates IHDR (length 13, first chunk, field values, and its CRC when `checkCRC` and the
  /// CRC is readable; a cut CRC is left to the chunk walk) and fills the dimensions; returns the
  /// problem, or nil when valid. The caller made sure the 29 bytes up to the CRC are readable.
  private static func header(
    _ reader: ByteReader, into report: inout ProbeReport, checkCRC: Bool
  ) -> String? {
    guard reader.u32be(8) == 13, reader.u32be(12) == ihdr else {
      return "PNG does not start with a 13-byte IHDR"
    }
    guard let width = reader.u32be(16), let height = reader.u32be(20),
      let depth = reader.u8(24), let colour = reader.u8(25),
      reader.u8(26) == 0, reader.u8(27) == 0, let interlace = reader.u8(28)
    else { return "PNG IHDR has an unknown compression or filter method" }
    guard (1...0x7FFF_FFFF).contains(width), (1...0x7FFF_FFFF).contains(height) else {
      return "PNG IHDR has a zero or oversized dimension"
    }
    guard interlace <= 1 else { return "PNG IHDR has an unknown interlace method" }
    let depths: [UInt8]
    switch colour {
    case 0: depths = [1, 2, 4, 8, 16]
    case 3: depths = [1, 2, 4, 8]
    case 2, 4, 6: depths = [8, 16]
    default: return "PNG IHDR has an unknown colour type \(colour)"
    }
    guard depths.contains(depth) else {
      return "PNG IHDR bit depth \(depth) is not allowed for colour type \(colour)"
    }
    if checkCRC, let data = reader.bytes(at: 12, count: 17), let stored = reader.u32be(29) {
      guard ProbeCRC32.checksum(data) == stored else { return "PNG IHDR CRC does not match" }
    }
    report.width = Int(width)
    report.height = Int(height)
    return nil
  }

  /// What libpng refuses in the PLTE chunk at `position` of `length` bytes: for a palette
  /// image, a length that is not 1 to 256 RGB entries ("PLTE: invalid"); for any image, a CRC
  /// that does not match (a critical chunk: "PLTE: CRC error"). Nil when fine, or when the
  /// chunk runs past the file (the walk says so).
  private static func palette(_ reader: ByteReader, at position: Int, length: Int, colourType: UInt8)
    -> String?
  {
    guard length > 0, length <= 768, length % 3 == 0 else {
      return colourType == 3 ? "PNG PLTE has \(length) bytes, not 1 to 256 RGB entries" : nil
    }
    guard let body = reader.bytes(at: position + 4, count: 4 + length),
      let stored = reader.u32be(position + 8 + length)
    else { return nil }
    return ProbeCRC32.checksum(body) == stored ? nil : "PNG PLTE CRC does not match"
  }

  /// Whether all four bytes of a chunk type are ASCII letters.
  private static func isChunkType(_ code: UInt32) -> Bool {
    for shift: UInt32 in [24, 16, 8, 0] {
      let byte = UInt8(truncatingIfNeeded: code >> shift)
      guard (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) else { return false }
    }
    return true
  }
}

/// CRC-32 (ISO 3309, as PNG uses it) over a byte array.
enum ProbeCRC32 {
  /// The 256-entry table for the reflected polynomial 0xEDB88320.
  private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
    var value = UInt32(index)
    for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
    return value
  }

  /// The CRC-32 of `bytes`.
  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
    }
    return crc ^ 0xFFFF_FFFF
  }
}
