/// What libjpeg checks in a JPEG's marker segments before it decodes a pixel, checked on the
/// whole file the same way (libjpeg's own messages quoted in each refusal's text):
///
/// - DHT: table class 0 or 1 and index 0...3 ("Bogus DHT index"), at most 256 symbols that fit
///   in the segment, codes that fit their lengths and DC symbols of 0...15 ("Bogus Huffman table
///   definition"), and no byte left over ("Bogus marker length");
/// - DQT: index 0...3 ("Bogus DQT index") and no byte left over;
/// - DRI: a 4-byte segment;
/// - SOFn: sampling factors of 1...4 that divide the largest (libjpeg upsamples by whole factors);
/// - SOS: 1 to 4 components and a length of 6 + 2 per component ("Bogus marker length"), each a
///   component of the frame ("Invalid component ID … in SOS"), whose quantisation table was
///   defined ("Quantization table … was not defined"), and for a progressive frame, spectral
///   selection and approximation libjpeg takes ("Invalid progressive parameters");
/// - markers libjpeg does not know (JPG, DHP, EXP, JPGn: "Unsupported marker type").
struct JPEGTables {
  /// The quantisation table indices defined so far.
  private var definedQuantisation = Set<UInt8>()
  /// The frame's components: id → quantisation table index.
  private var components: [UInt8: UInt8] = [:]
  /// The frame is progressive (SOF2, SOF6, SOF10, SOF14).
  private var progressive = false

  /// Markers libjpeg refuses as "Unsupported marker type": JPG, DHP, EXP and JPG0–JPG13.
  static func isUnknown(_ marker: UInt8) -> Bool {
    marker == 0xC8 || marker == 0xDE || marker == 0xDF || (0xF0...0xFD).contains(marker)
  }

  /// Checks the segment of `marker` whose length field is at `lengthAt` and which ends at `end`
  /// (inside the file); returns the problem, or nil.
  mutating func check(_ reader: ByteReader, marker: UInt8, lengthAt: Int, end: Int) -> String? {
    let body = lengthAt + 2
    if Self.isUnknown(marker) {
      return "JPEG has marker FF\(ProbeMath.hex(marker)), which libjpeg does not know"
    }
    switch marker {
    case 0xC4: return huffmanTables(reader, from: body, to: end)
    case 0xDB: return quantisationTables(reader, from: body, to: end)
    case 0xDD: return end - body == 2 ? nil : "JPEG DRI segment is \(end - body + 2) bytes, not 4"
    case 0xDA: return scanHeader(reader, from: body, to: end)
    default:
      return JPEGProbe.isStartOfFrame(marker) ? frame(reader, marker: marker, from: body, to: end) : nil
    }
  }

  /// DHT: every table's class and index, symbol count, codes and DC symbols; no bytes left.
  private func huffmanTables(_ reader: ByteReader, from start: Int, to end: Int) -> String? {
    var position = start
    while end - position > 16 {
      guard let classAndIndex = reader.u8(position), let counts = reader.bytes(at: position + 1, count: 16)
      else {
        return nil
      }
      guard classAndIndex >> 4 <= 1, classAndIndex & 0x0F <= 3 else {
        return "JPEG DHT has table class and index 0x\(ProbeMath.hex(classAndIndex)) (Bogus DHT index)"
      }
      let symbols = counts.reduce(0) { $0 + Int($1) }
      guard symbols <= 256, position + 17 + symbols <= end else {
        return "JPEG DHT table declares \(symbols) symbols (Bogus Huffman table definition)"
      }
      var code = 0
      for (index, count) in counts.enumerated() {
        code += Int(count)
        guard code < 1 << (index + 1) else {
          return "JPEG DHT table has more codes than its lengths hold (Bogus Huffman table definition)"
        }
        code <<= 1
      }
      if classAndIndex >> 4 == 0, let values = reader.bytes(at: position + 17, count: symbols),
        values.contains(where: { $0 > 15 })
      {
        return "JPEG DHT DC table has a symbol over 15 (Bogus Huffman table definition)"
      }
      position += 17 + symbols
    }
    return position == end
      ? nil : "JPEG DHT segment has \(end - position) bytes left over (Bogus marker length)"
  }

  /// DQT: every table's index, and each table whole within the segment, as libjpeg-turbo reads
  /// it (it reads all 64 values of a table, and a segment they overrun is "Bogus marker length":
  /// fuzz seed 35 cut a DQT to 3 bytes); no byte left.
  private mutating func quantisationTables(_ reader: ByteReader, from start: Int, to end: Int) -> String? {
    var position = start
    while position < end {
      guard let precisionAndIndex = reader.u8(position) else { return nil }
      let index = precisionAndIndex & 0x0F
      guard index <= 3 else { return "JPEG DQT has table index \(index) (Bogus DQT index)" }
      definedQuantisation.insert(index)
      let width = precisionAndIndex >> 4 == 0 ? 1 : 2
      let held = (end - position - 1) / width
      guard held >= 64 else {
        return "JPEG DQT table \(index) has \(held) of its 64 values in its segment (Bogus marker length)"
      }
      position += 1 + 64 * width
    }
    return position == end
      ? nil : "JPEG DQT segment has \(end - position) bytes left over (Bogus marker length)"
  }

  /// A frame header: its components' ids and quantisation tables, and whether it is
  /// progressive. The problem when a component's sampling factors are outside 1...4 ("Bogus
  /// sampling factors") or do not divide the largest ("Fractional sampling not implemented
  /// yet": libjpeg upsamples by whole factors only), else nil.
  private mutating func frame(_ reader: ByteReader, marker: UInt8, from start: Int, to end: Int) -> String? {
    progressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
    guard let count = reader.u8(start + 5) else { return nil }
    var factors: [(h: Int, v: Int)] = []
    for index in 0..<Int(count) {
      let at = start + 6 + 3 * index
      guard at + 3 <= end, let id = reader.u8(at), let sampling = reader.u8(at + 1),
        let table = reader.u8(at + 2)
      else { return nil }
      components[id] = table
      factors.append((Int(sampling >> 4), Int(sampling & 0x0F)))
    }
    guard factors.allSatisfy({ (1...4).contains($0.h) && (1...4).contains($0.v) }) else {
      return
        "JPEG frame has a component sampled \(factors.map { "\($0.h)x\($0.v)" }) (Bogus sampling factors)"
    }
    let widest = factors.map(\.h).max() ?? 1
    let tallest = factors.map(\.v).max() ?? 1
    guard factors.allSatisfy({ widest % $0.h == 0 && tallest % $0.v == 0 }) else {
      return
        "JPEG frame's sampling factors \(factors.map { "\($0.h)x\($0.v)" }) are not whole multiples (Fractional sampling not implemented yet)"
    }
    return nil
  }

  /// SOS: its length, components, their quantisation tables, and progressive parameters.
  private func scanHeader(_ reader: ByteReader, from start: Int, to end: Int) -> String? {
    guard let count = reader.u8(start), (1...4).contains(count), end - start == 4 + 2 * Int(count) else {
      return "JPEG scan header's length does not match its components (Bogus marker length)"
    }
    for index in 0..<Int(count) {
      guard let id = reader.u8(start + 1 + 2 * index) else { return nil }
      guard let table = components[id] else { return "JPEG scan names component \(id), not in the frame" }
      guard definedQuantisation.contains(table) else {
        return "JPEG component \(id) uses quantisation table \(table), which is not defined"
      }
    }
    guard progressive, let first = reader.u8(end - 3), let last = reader.u8(end - 2),
      let approximation = reader.u8(end - 1)
    else { return nil }
    let high = approximation >> 4
    let low = approximation & 0x0F
    let valid =
      (first == 0 ? last == 0 : first <= last && last <= 63 && count == 1)
      && (high == 0 || low == high - 1) && low <= 13
    return valid
      ? nil
      : "JPEG progressive scan has Ss=\(first) Se=\(last) Ah=\(high) Al=\(low) (Invalid progressive parameters)"
  }
}
