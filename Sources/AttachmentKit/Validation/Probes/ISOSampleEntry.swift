/// Reads the codec of an ISO BMFF / QuickTime sample entry (the children of `stsd`) as an
/// RFC 6381 `codecs` string, from the entry's configuration box: `avcC` (`avc1.64001F`), `hvcC`
/// (`hvc1.1.6.L93.B0`), `av1C` (`av01.0.04M.08`), `vpcC` (`vp09.00.10.08`), and for `mp4a` /
/// `mp4v` the `esds` object type (`mp4a.40.2`, `mp4a.6B`, `mp4v.20.9`). Entries without a
/// registered long form give their four-character code (`ac-3`, `ec-3`, `opus`, `mlpa`).
///
/// Reads only inside the entry; a configuration box that is missing or too short gives the
/// bare four-character code, never a failure (the container check has already passed).
enum ISOSampleEntry {
  /// Box and entry types read here.
  private static let avcC = ProbeMath.code("avcC")
  private static let hvcC = ProbeMath.code("hvcC")
  private static let av1C = ProbeMath.code("av1C")
  private static let vpcC = ProbeMath.code("vpcC")
  private static let esds = ProbeMath.code("esds")
  private static let wave = ProbeMath.code("wave")
  private static let alac = ProbeMath.code("alac")

  /// Four-character codes whose RFC 6381 name differs from the code itself (case, a dot).
  private static let renamed: [String: String] = [
    "Opus": "opus", "fLaC": "flac", ".mp3": "mp3", "ms\u{0}U": "mp3",
  ]

  /// DTS object type indications of `esds` (MP4RA object types 0xA9...0xAC) by the sample
  /// entry name DTS registered for the same stream, which is what players call it.
  private static let dtsObjectTypes: [UInt8: String] = [
    0xA9: "dtsc", 0xAA: "dtsh", 0xAB: "dtsl", 0xAC: "dtse",
  ]

  /// The codec of `entry`, a sample entry of a track whose handler is `handler`.
  static func codec(_ reader: ByteReader, _ entry: ISOBox, handler: UInt32) -> String {
    let name = ProbeMath.trimmed(entry.typeName)
    let children = configuration(reader, entry, handler: handler)
    switch name {
    case "avc1", "avc2", "avc3", "avc4":
      guard let box = children.first(where: { $0.type == avcC }), box.payloadSize >= 4,
        let bytes = reader.bytes(at: box.payload + 1, count: 3)
      else { return name }
      return name + "." + bytes.map(ProbeMath.hex).joined()
    case "hvc1", "hev1":
      guard let box = children.first(where: { $0.type == hvcC }), box.payloadSize >= 13,
        let bytes = reader.bytes(at: box.payload, count: 13)
      else { return name }
      return name + "." + hevcParameters(bytes)
    case "av01":
      guard let box = children.first(where: { $0.type == av1C }), box.payloadSize >= 3,
        let bytes = reader.bytes(at: box.payload, count: 3)
      else { return name }
      return name + "." + av1Parameters(bytes)
    case "vp09", "vp08":
      guard let box = children.first(where: { $0.type == vpcC }), box.payloadSize >= 7,
        let bytes = reader.bytes(at: box.payload + 4, count: 3)
      else { return name }
      return name + "." + [bytes[0], bytes[1], bytes[2] >> 4].map(twoDigits).joined(separator: ".")
    case "mp4a", "mp4v":
      guard let box = children.first(where: { $0.type == esds }),
        let described = objectType(reader, box, prefix: name)
      else { return name }
      return described
    default:
      return renamed[entry.typeName] ?? name
    }
  }

  /// Whether an audio sample entry can describe a stream: a channel count or a sample rate in
  /// its fields (QuickTime version 2 entries: their 64-bit rate and 32-bit channel count), else
  /// a configuration box that carries them (an `esds` whose object type is readable, an `alac`
  /// box with channels and a rate, or any other box after the fields, such as `dac3`). An
  /// entry with none of these (all zeros) cannot be decoded: ffmpeg 5.1 stops on one with
  /// "Neither number of channels nor channel layout specified", while zero fields next to a
  /// valid `esds` play.
  static func describesAudio(_ reader: ByteReader, _ entry: ISOBox) -> Bool {
    guard entry.payloadSize >= 28, let version = reader.u16be(entry.payload + 8) else { return false }
    if version == 2 {
      if let rate = reader.u64be(entry.payload + 32), let channels = reader.u32be(entry.payload + 40),
        rate != 0, channels != 0
      {
        return true
      }
    } else if let channels = reader.u16be(entry.payload + 16), let rate = reader.u32be(entry.payload + 24),
      channels != 0 || rate != 0
    {
      return true
    }
    let children = configuration(reader, entry, handler: ISOMovie.soun)
    for child in children {
      switch child.type {
      case esds:
        if objectType(reader, child, prefix: "mp4a") != nil { return true }
      case alac:
        // ALACSpecificConfig after the full box header: numChannels at 9, sampleRate at 20.
        if let channels = reader.u8(child.payload + 4 + 9), let rate = reader.u32be(child.payload + 4 + 20),
          child.payloadSize >= 28, channels != 0, rate != 0
        {
          return true
        }
      case wave:
        break
      default:
        if child.type != 0, ProbeMath.isPrintable(child.type) { return true }
      }
    }
    return false
  }

  /// The problem a decoder finds in a video sample entry's configuration before any frame (an
  /// HEVC SPS FFmpeg refuses: ``HEVCParameterSets``), else nil.
  static func configurationProblem(_ reader: ByteReader, _ entry: ISOBox, handler: UInt32) -> String? {
    guard ["hvc1", "hev1"].contains(ProbeMath.trimmed(entry.typeName)),
      let box = configuration(reader, entry, handler: handler).first(where: { $0.type == hvcC })
    else { return nil }
    return HEVCParameterSets.problem(reader, hvcC: box)
  }

  /// The NAL length size (1, 2 or 4) of an H.264 (`avcC`) or HEVC (`hvcC`) sample entry,
  /// nil for other entries or without a readable configuration box.
  static func nalLengthSize(_ reader: ByteReader, _ entry: ISOBox, handler: UInt32) -> Int? {
    let hevc: Bool
    switch ProbeMath.trimmed(entry.typeName) {
    case "avc1", "avc3": hevc = false
    case "hvc1", "hev1": hevc = true
    default: return nil
    }
    let type = hevc ? hvcC : avcC
    guard let box = configuration(reader, entry, handler: handler).first(where: { $0.type == type }) else {
      return nil
    }
    return ISONALUnits.lengthSize(reader, configuration: box, hevc: hevc)
  }

  /// The child boxes of a visual or audio sample entry (and of a QuickTime `wave` box among
  /// them), or none when they cannot be read.
  private static func configuration(_ reader: ByteReader, _ entry: ISOBox, handler: UInt32) -> [ISOBox] {
    let skip: Int
    if handler == ISOMovie.vide {
      skip = 78  // SampleEntry (8) + VisualSampleEntry fields (70)
    } else if handler == ISOMovie.soun {
      // SampleEntry (8) + AudioSampleEntry (20); QuickTime sound description v1 adds 16, v2 36.
      switch reader.u16be(entry.payload + 8) {
      case 1: skip = 44
      case 2: skip = 64
      default: skip = 28
      }
    } else {
      return []
    }
    guard entry.payloadSize >= skip,
      case .success(let boxes) = ISOBox.children(reader, of: entry, skipping: skip)
    else { return [] }
    guard let inner = boxes.first(where: { $0.type == wave }),
      case .success(let wrapped) = ISOBox.children(reader, of: inner)
    else { return boxes }
    return boxes + wrapped
  }

  /// `hvc1.` parameters from the first 13 bytes of `hvcC` (ISO/IEC 14496-15 annex E):
  /// profile space and profile, the reversed compatibility flags in hex, tier and level, and
  /// the constraint bytes without trailing zeros.
  private static func hevcParameters(_ bytes: [UInt8]) -> String {
    let space = ["", "A", "B", "C"][Int(bytes[1] >> 6)]
    let profile = Int(bytes[1] & 0x1F)
    let tier = bytes[1] & 0x20 != 0 ? "H" : "L"
    var flags: UInt32 = 0
    for byte in bytes[2...5] { flags = flags << 8 | UInt32(byte) }
    var reversed: UInt32 = 0
    for bit in 0..<32 where flags & (1 << UInt32(bit)) != 0 { reversed |= 1 << UInt32(31 - bit) }
    var constraints = Array(bytes[6...11])
    while constraints.last == 0 { constraints.removeLast() }
    var parts = [
      space + String(profile), String(reversed, radix: 16, uppercase: true), tier + String(bytes[12]),
    ]
    parts += constraints.map(ProbeMath.hex)
    return parts.joined(separator: ".")
  }

  /// `av01.` parameters from the first 3 bytes of `av1C` (AV1 ISOBMFF binding, "Codecs
  /// Parameter String"): profile, level with tier (M/H), bit depth.
  private static func av1Parameters(_ bytes: [UInt8]) -> String {
    let profile = Int(bytes[1] >> 5)
    let level = Int(bytes[1] & 0x1F)
    let tier = bytes[2] & 0x80 != 0 ? "H" : "M"
    let depth = bytes[2] & 0x40 == 0 ? 8 : (bytes[2] & 0x20 != 0 ? 12 : 10)
    return "\(profile).\(twoDigits(UInt8(level)))\(tier).\(twoDigits(UInt8(depth)))"
  }

  /// The codecs string of an `esds` box (ISO/IEC 14496-1 descriptors): the decoder config's
  /// object type in hex, and for MPEG-4 audio (0x40) the audio object type of its
  /// AudioSpecificConfig (`mp4a.40.2`), for MPEG-4 visual (0x20) the profile and level of its
  /// visual object sequence when present. Nil when the descriptors cannot be read.
  private static func objectType(_ reader: ByteReader, _ box: ISOBox, prefix: String) -> String? {
    var position = box.payload + 4  // full box version and flags
    let end = box.end
    guard let (tag, body) = descriptor(reader, at: &position, end: end), tag == 0x03,
      let flags = reader.u8(body + 2)
    else { return nil }
    position = body + 3
    if flags & 0x80 != 0 { position += 2 }
    if flags & 0x40 != 0, let length = reader.u8(position) { position += 1 + Int(length) }
    if flags & 0x20 != 0 { position += 2 }
    guard let (configTag, config) = descriptor(reader, at: &position, end: end), configTag == 0x04,
      let type = reader.u8(config)
    else { return nil }
    if let dts = dtsObjectTypes[type] { return dts }
    let base = prefix + "." + ProbeMath.hex(type)
    var inner = config + 13
    guard let (infoTag, info) = descriptor(reader, at: &inner, end: end), infoTag == 0x05 else { return base }
    if type == 0x40, let first = reader.u8(info) {
      var objectType = Int(first >> 3)
      if objectType == 31, let second = reader.u8(info + 1) {
        objectType = 32 + Int((first & 0x07) << 3 | second >> 5)
      }
      return base + "." + String(objectType)
    }
    if type == 0x20, reader.matches([0, 0, 1, 0xB0], at: info), let level = reader.u8(info + 4) {
      return base + "." + String(level)
    }
    return base
  }

  /// Reads a descriptor header (tag, then a size of up to four 7-bit bytes) at `position`,
  /// moving `position` past the whole descriptor; returns its tag and the offset of its body,
  /// nil when it does not fit before `end`.
  private static func descriptor(_ reader: ByteReader, at position: inout Int, end: Int) -> (UInt8, Int)? {
    guard let tag = reader.u8(position) else { return nil }
    var size = 0
    var cursor = position + 1
    for _ in 0..<4 {
      guard let byte = reader.u8(cursor) else { return nil }
      cursor += 1
      size = size << 7 | Int(byte & 0x7F)
      if byte & 0x80 == 0 { break }
    }
    guard let next = ProbeMath.add(cursor, size), next <= end else { return nil }
    position = next
    return (tag, cursor)
  }

  /// `value` in decimal with at least two digits.
  private static func twoDigits(_ value: UInt8) -> String {
    value < 10 ? "0\(value)" : String(value)
  }
}
