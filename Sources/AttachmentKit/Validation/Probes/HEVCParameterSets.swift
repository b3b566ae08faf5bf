/// The sequence parameter sets of an HEVC sample entry's `hvcC`, read as far as FFmpeg's
/// `ff_hevc_parse_sps` reads before it refuses one: sub-layer count, profile, tier and level,
/// the SPS id, the chroma format and the picture size. An `hvcC` whose SPS says a picture of
/// 0 pixels ("Picture size 0x321 is invalid"), or an id or chroma format out of range, leaves
/// the decoder without a parameter set ("SPS 0 does not exist"): no frame decodes.
///
/// Only the first 64 KiB of the box are read, and only the SPS bytes up to the picture size.
enum HEVCParameterSets {
  /// The NAL unit type of a sequence parameter set.
  private static let spsType: UInt8 = 33

  /// The problem with the first SPS of the `hvcC` box, else nil (also when the box cannot be
  /// read far enough to say: the codec string is then all the probe knows).
  static func problem(_ reader: ByteReader, hvcC box: ISOBox) -> String? {
    guard box.payloadSize > 23, let bytes = reader.bytes(at: box.payload, count: min(box.payloadSize, 65_536))
    else { return nil }
    var position = 23
    for _ in 0..<Int(bytes[22]) {
      guard position + 3 <= bytes.count else { return nil }
      let type = bytes[position] & 0x3F
      let units = Int(bytes[position + 1]) << 8 | Int(bytes[position + 2])
      position += 3
      for _ in 0..<units {
        guard position + 2 <= bytes.count else { return nil }
        let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
        position += 2
        guard position + length <= bytes.count else { return nil }
        if type == spsType { return spsProblem(Array(bytes[position..<(position + length)])) }
        position += length
      }
    }
    return nil
  }

  /// The problem FFmpeg finds in one SPS NAL unit (its 2-byte header included), else nil.
  static func spsProblem(_ unit: [UInt8]) -> String? {
    var bits = RBSPBits(unit.dropFirst(2))
    guard bits.skip(4), let maxSubLayers = bits.read(3), bits.skip(1) else { return nil }
    guard maxSubLayers < 7 else { return "HEVC SPS declares \(maxSubLayers + 1) sub-layers, over 7" }
    // profile_tier_level: the general profile and level (96 bits), then each sub-layer's flags.
    guard bits.skip(96) else { return nil }
    var present: [(profile: Bool, level: Bool)] = []
    for _ in 0..<maxSubLayers {
      guard let profile = bits.read(1), let level = bits.read(1) else { return nil }
      present.append((profile == 1, level == 1))
    }
    if maxSubLayers > 0, !bits.skip(2 * (8 - maxSubLayers)) { return nil }
    for layer in present {
      guard bits.skip(layer.profile ? 88 : 0), bits.skip(layer.level ? 8 : 0) else { return nil }
    }
    guard let id = bits.exponentialGolomb() else { return "HEVC SPS id is not readable" }
    guard id < 16 else { return "HEVC SPS id \(id) is out of range" }
    guard let chroma = bits.exponentialGolomb(), chroma <= 3 else {
      return "HEVC SPS chroma_format_idc is invalid"
    }
    if chroma == 3, !bits.skip(1) { return nil }
    guard let width = bits.exponentialGolomb(), let height = bits.exponentialGolomb() else { return nil }
    // av_image_check_size: both positive, (width + 128) × (height + 128) under 2^31 / 8.
    guard width > 0, height > 0,
      let area = ProbeMath.multiply(width + 128, height + 128), area < Int(Int32.max) / 8
    else {
      return "HEVC SPS says a picture of \(width)x\(height) (Picture size \(width)x\(height) is invalid)"
    }
    return nil
  }
}

/// A bit reader over a NAL unit's payload that drops emulation prevention bytes (the 03 of
/// 00 00 03), as a decoder does before it reads syntax elements.
struct RBSPBits {
  private var bytes: [UInt8] = []
  private var bit = 0

  /// The reader over `payload` (the NAL unit after its header).
  init(_ payload: ArraySlice<UInt8>) {
    var zeros = 0
    for byte in payload {
      if zeros >= 2, byte == 3 {
        zeros = 0
        continue
      }
      zeros = byte == 0 ? zeros + 1 : 0
      bytes.append(byte)
    }
  }

  /// Skips `count` bits; false when fewer remain.
  mutating func skip(_ count: Int) -> Bool {
    guard bit + count <= bytes.count * 8 else { return false }
    bit += count
    return true
  }

  /// The next `count` (at most 32) bits, most significant first; nil when fewer remain.
  mutating func read(_ count: Int) -> Int? {
    guard count <= 32, bit + count <= bytes.count * 8 else { return nil }
    var value = 0
    for _ in 0..<count {
      value = value << 1 | Int(bytes[bit >> 3] >> (7 - UInt8(bit & 7)) & 1)
      bit += 1
    }
    return value
  }

  /// An unsigned exponential-Golomb value (ue(v)); nil past the end or over 31 leading zeros.
  mutating func exponentialGolomb() -> Int? {
    var zeros = 0
    while true {
      guard let next = read(1) else { return nil }
      if next == 1 { break }
      zeros += 1
      guard zeros <= 31 else { return nil }
    }
    guard let suffix = read(zeros) else { return nil }
    return (1 << zeros) - 1 + suffix
  }
}
