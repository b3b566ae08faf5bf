@testable import AttachmentKit

/// Hand-built, minimal but structurally complete samples of every probed format, and byte
/// helpers to build them. Every builder returns a file the probes must accept as is.
enum ProbeFixtures {
  // MARK: - Byte helpers

  /// Big-endian 16-bit.
  static func be16(_ value: Int) -> [UInt8] {
    [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
  }
  /// Big-endian 32-bit.
  static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
  /// Big-endian 64-bit.
  static func be64(_ value: Int) -> [UInt8] { be32(value >> 32) + be32(value) }
  /// Little-endian 16-bit.
  static func le16(_ value: Int) -> [UInt8] { be16(value).reversed() }
  /// Little-endian 32-bit.
  static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }
  /// ASCII bytes of `text`.
  static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
  /// `count` copies of `byte`.
  static func fill(_ count: Int, _ byte: UInt8 = 0) -> [UInt8] { [UInt8](repeating: byte, count: count) }

  // MARK: - Images

  /// A JPEG: SOI, JFIF APP0, DQT (tables 0 and 1), SOFn (3 components), DHT, SOS, entropy
  /// data with a stuffed FF00 and an RST marker, EOI; progressive ones (SOF2) scan DC first and
  /// get a second DHT + an AC scan of one component.
  static func jpeg(
    width: Int = 64, height: Int = 48, frameMarker: UInt8 = 0xC0, endOfImage: Bool = true,
    trailing: [UInt8] = []
  ) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8]
    bytes += [0xFF, 0xE0] + be16(16) + ascii("JFIF") + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    bytes += [0xFF, 0xDB] + be16(132) + [0] + fill(64, 1) + [1] + fill(64, 1)
    bytes += [0xFF, frameMarker] + be16(17) + [8] + be16(height) + be16(width)
    bytes += [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    let table: [UInt8] = [0xFF, 0xC4] + be16(20) + [0, 1] + fill(15) + [0]
    // A progressive frame starts with a DC scan (Ss = Se = 0); its AC scans have one component.
    let progressive = frameMarker == 0xC2
    let scan: [UInt8] =
      [0xFF, 0xDA] + be16(12) + [3, 1, 0, 2, 0x11, 3, 0x11, 0, progressive ? 0 : 0x3F, 0]
    bytes += table + scan + [0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD0, 0x78, 0x9A]
    if progressive {
      bytes += table + [0xFF, 0xDA] + be16(8) + [1, 1, 0, 1, 0x3F, 0] + [0x11, 0xFF, 0x00, 0x22]
    }
    if endOfImage { bytes += [0xFF, 0xD9] }
    return bytes + trailing
  }

  /// A PNG chunk: length, type, data, CRC.
  static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    let body = ascii(type) + data
    return be32(data.count) + body + be32(Int(ProbeCRC32.checksum(body)))
  }

  /// A PNG: signature, IHDR, PLTE for palette images, optional acTL, IDAT, IEND.
  static func png(
    width: Int = 64, height: Int = 48, depth: UInt8 = 8, colourType: UInt8 = 6, frames: Int? = nil
  ) -> [UInt8] {
    var bytes = PNGProbe.signature
    bytes += pngChunk("IHDR", be32(width) + be32(height) + [depth, colourType, 0, 0, 0])
    if let frames { bytes += pngChunk("acTL", be32(frames) + be32(0)) }
    if colourType == 3 { bytes += pngChunk("PLTE", fill(6, 0x80)) }
    bytes += pngChunk(
      "IDAT", zlibStored(pngRows(width: width, height: height, depth: depth, colourType: colourType)))
    return bytes + pngChunk("IEND", [])
  }

  /// The filtered rows of a non-interlaced PNG of all-zero pixels: per row a filter byte (0)
  /// and the packed samples.
  static func pngRows(width: Int, height: Int, depth: UInt8, colourType: UInt8) -> [UInt8] {
    let samples = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colourType)] ?? 1
    let rowBytes = (width * samples * Int(depth) + 7) / 8
    return fill(height * (1 + rowBytes))
  }

  /// `data` as a zlib stream (RFC 1950) of stored deflate blocks, with its Adler-32.
  static func zlibStored(_ data: [UInt8]) -> [UInt8] {
    var bytes: [UInt8] = [0x78, 0x01]
    var start = 0
    repeat {
      let count = min(65_535, data.count - start)
      let last: UInt8 = start + count == data.count ? 1 : 0
      bytes += [last] + le16(count) + le16(count ^ 0xFFFF) + data[start..<start + count]
      start += count
    } while start < data.count
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in data {
      a = (a + UInt32(byte)) % 65_521
      b = (b + a) % 65_521
    }
    return bytes + be32(Int(b << 16 | a))
  }

  /// A GIF89a with a 2-colour global table, a NETSCAPE loop extension, a comment, and `frames`
  /// images each with a graphic control extension; then the trailer.
  static func gif(width: Int = 64, height: Int = 48, frames: Int = 1, trailer: Bool = true) -> [UInt8] {
    var bytes = ascii("GIF89a") + le16(width) + le16(height) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
    bytes += [0x21, 0xFF, 11] + ascii("NETSCAPE2.0") + [3, 1, 0, 0, 0]
    bytes += [0x21, 0xFE, 5] + ascii("hello") + [0]
    for _ in 0..<frames {
      bytes += [0x21, 0xF9, 4, 0, 10, 0, 0, 0]
      bytes += [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [0]
      bytes += [2, 2, 0x4C, 0x01, 0]
    }
    if trailer { bytes.append(0x3B) }
    return bytes
  }

  /// A TIFF with `pages` IFDs, each 8-bit grey, one strip of width × height bytes. `stripBytes`
  /// overrides the strip byte count written in the tag (to point past the end); `rowsPerStrip`
  /// the RowsPerStrip written (as a LONG; the height as a SHORT by default).
  static func tiff(
    littleEndian: Bool = true, width: Int = 16, height: Int = 8, pages: Int = 1, stripBytes: Int? = nil,
    rowsPerStrip: Int? = nil, photometric: Bool = true, photometricValue: Int = 1
  ) -> [UInt8] {
    let u16 = littleEndian ? le16 : be16
    let u32 = littleEndian ? le32 : be32
    let entryCount = 9
    let ifdSize = 2 + 12 * entryCount + 4
    let pixels = width * height
    var bytes: [UInt8] = littleEndian ? [0x49, 0x49, 0x2A, 0] : [0x4D, 0x4D, 0, 0x2A]
    bytes += u32(8)
    for page in 0..<pages {
      let ifdAt = 8 + page * (ifdSize + pixels)
      let dataAt = ifdAt + ifdSize
      /// One entry with a SHORT or LONG value held inline.
      func entry(_ tag: Int, _ type: Int, _ value: Int) -> [UInt8] {
        u16(tag) + u16(type) + u32(1) + (type == 3 ? u16(value) + [0, 0] : u32(value))
      }
      bytes += u16(entryCount)
      bytes += entry(256, 3, width) + entry(257, 3, height) + entry(258, 3, 8) + entry(259, 3, 1)
      // Without PhotometricInterpretation, Threshholding (263) keeps the count and the order.
      bytes +=
        entry(photometric ? 262 : 263, 3, photometricValue) + entry(273, 4, dataAt) + entry(277, 3, 1)
        + entry(278, rowsPerStrip == nil ? 3 : 4, rowsPerStrip ?? height)
      bytes += entry(279, 4, stripBytes ?? pixels)
      bytes += u32(page + 1 < pages ? dataAt + pixels : 0)
      bytes += fill(pixels, 0x7F)
    }
    return bytes
  }

  // MARK: - ISO BMFF

  /// A box: 32-bit size, type, payload.
  static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
    be32(8 + payload.count) + ascii(type) + payload
  }

  /// A full box: version, 24-bit flags, payload.
  static func fullBox(_ type: String, version: UInt8 = 0, flags: Int = 0, _ payload: [UInt8]) -> [UInt8] {
    box(type, [version] + Array(be32(flags).suffix(3)) + payload)
  }

  /// ftyp with a major brand and compatible brands.
  static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
    box("ftyp", ascii(major) + be32(0x200) + compatible.flatMap(ascii))
  }

  /// The unity matrix of mvhd / tkhd.
  static let matrix: [UInt8] = be32(0x10000) + fill(12) + be32(0x10000) + fill(12) + be32(0x4000_0000)

  /// mvhd version 0 (or 1) with a timescale and duration.
  static func mvhd(timescale: Int, duration: Int, version: UInt8 = 0) -> [UInt8] {
    let times =
      version == 1 ? fill(16) + be32(timescale) + be64(duration) : fill(8) + be32(timescale) + be32(duration)
    return fullBox(
      "mvhd", version: version, times + be32(0x10000) + be16(0x100) + fill(10) + matrix + fill(24) + be32(3))
  }

  /// A track: tkhd (16.16 size), mdia (mdhd, hdlr, minf/stbl with stsd and stco).
  static func trak(
    id: Int, handler: String, codec: String, width: Int = 0, height: Int = 0, timescale: Int, duration: Int,
    chunkOffsets: [Int]
  ) -> [UInt8] {
    let tkhd = fullBox(
      "tkhd", flags: 3,
      fill(8) + be32(id) + fill(4) + be32(duration) + fill(8) + fill(8) + matrix + be32(width << 16)
        + be32(height << 16))
    let mdhd = fullBox("mdhd", fill(8) + be32(timescale) + be32(duration) + be16(0x55C4) + be16(0))
    let hdlr = fullBox("hdlr", fill(4) + ascii(handler) + fill(12) + [0])
    let entryBody: [UInt8] =
      handler == "vide"
      ? fill(6) + be16(1) + fill(16) + be16(width) + be16(height) + fill(50)
      : fill(6) + be16(1) + fill(8) + be16(2) + be16(16) + fill(4) + be32(44_100 << 16)
    let stsd = fullBox("stsd", be32(1) + box(codec, entryBody))
    let stco = fullBox("stco", be32(chunkOffsets.count) + chunkOffsets.flatMap(be32))
    let stbl = box("stbl", stsd + stco)
    let minf = box("minf", stbl)
    return box("trak", tkhd + box("mdia", mdhd + hdlr + minf))
  }

  /// A complete MP4 / MOV: ftyp (or none, QuickTime style), moov with a video and/or audio
  /// track, mdat; `moovFirst` puts moov before mdat (faststart). Chunk offsets point into mdat.
  static func movie(
    major: String? = "isom", compatible: [String] = ["isom", "iso2", "avc1", "mp41"], video: Bool = true,
    audio: Bool = false, seconds: Int = 2, moovFirst: Bool = false, leadingWide: Bool = false
  ) -> [UInt8] {
    let head = (major.map { ftyp($0, compatible) } ?? []) + (leadingWide ? box("wide", []) : [])
    let mediaData = box("mdat", fill(64, 0x42))
    /// The moov with chunk offsets pointing at `dataAt`.
    func moov(_ dataAt: Int) -> [UInt8] {
      var body = mvhd(timescale: 1_000, duration: seconds * 1_000)
      if video {
        body += trak(
          id: 1, handler: "vide", codec: "avc1", width: 160, height: 120, timescale: 15_360,
          duration: seconds * 15_360, chunkOffsets: [dataAt])
      }
      if audio {
        body += trak(
          id: 2, handler: "soun", codec: "mp4a", timescale: 44_100, duration: seconds * 44_100,
          chunkOffsets: [dataAt + 32])
      }
      return box("moov", body)
    }
    if moovFirst {
      let size = moov(0).count
      return head + moov(head.count + size + 8) + mediaData
    }
    return head + mediaData + moov(head.count + 8)
  }

  /// A fragmented MP4: ftyp iso5, moov (mvhd duration 0, one video track, mvex/trex with a
  /// default duration of 512), then `fragments` moof + mdat pairs of 10 samples each. The first
  /// trun carries per-sample durations of 1024; the rest use the trex default.
  static func fragmentedMovie(fragments: Int = 2, withMehd: Bool = false) -> [UInt8] {
    var mvex = withMehd ? fullBox("mehd", be32(15_360 * 3)) : []
    mvex += fullBox("trex", be32(1) + be32(1) + be32(512) + be32(0) + be32(0))
    var moovBody = mvhd(timescale: 1_000, duration: 0)
    moovBody += trak(
      id: 1, handler: "vide", codec: "avc1", width: 160, height: 120, timescale: 15_360, duration: 0,
      chunkOffsets: [])
    moovBody += box("mvex", mvex)
    var bytes = ftyp("iso5", ["iso5", "iso6", "mp41"]) + box("moov", moovBody)
    for index in 0..<fragments {
      let tfhd = fullBox("tfhd", flags: 0x02_0000, be32(1))
      let trun =
        index == 0
        ? fullBox("trun", flags: 0x100, be32(10) + (0..<10).flatMap { _ in be32(1_024) })
        : fullBox("trun", flags: 0, be32(10))
      let moof = box("moof", fullBox("mfhd", be32(index + 1)) + box("traf", tfhd + trun))
      bytes += moof + box("mdat", fill(40, 0x33))
    }
    return bytes
  }

  // MARK: - MPEG

  /// A 5-byte time stamp (PTS / MPEG-1 SCR layout) with the 4-bit prefix `prefix`.
  static func timestamp(_ value: Int, prefix: UInt8 = 0x2) -> [UInt8] {
    [
      prefix << 4 | UInt8((value >> 30) & 0x07) << 1 | 1, UInt8((value >> 22) & 0xFF),
      UInt8((value >> 15) & 0x7F) << 1 | 1, UInt8((value >> 7) & 0xFF), UInt8(value & 0x7F) << 1 | 1,
    ]
  }

  /// A pack header: MPEG-2 (14 bytes) or MPEG-1 (12 bytes) with the SCR `clock`.
  static func packHeader(clock: Int, mpeg2: Bool = true) -> [UInt8] {
    let start: [UInt8] = [0, 0, 1, 0xBA]
    if !mpeg2 { return start + timestamp(clock) + [0x80, 0x1B, 0x83] }
    let b4 = 0x44 | UInt8((clock >> 30) & 0x07) << 3 | UInt8((clock >> 28) & 0x03)
    let b6 = UInt8((clock >> 15) & 0x1F) << 3 | 0x04 | UInt8((clock >> 13) & 0x03)
    let b8 = UInt8(clock & 0x1F) << 3 | 0x04
    return start + [
      b4, UInt8((clock >> 20) & 0xFF), b6, UInt8((clock >> 5) & 0xFF), b8, 0x01, 0x01, 0x89, 0xC3, 0xF8,
    ]
  }

  /// A sequence header (12 bytes, no matrices): `width`×`height`, aspect 1, 25 fps.
  static func sequenceHeader(width: Int = 160, height: Int = 120) -> [UInt8] {
    [0, 0, 1, 0xB3, UInt8(width >> 4), UInt8((width & 0x0F) << 4 | height >> 8), UInt8(height & 0xFF)]
      + [0x13, 0xFF, 0xFF, 0xE0, 0x80]
  }

  /// A GOP header and one frame picture, with a little slice data.
  static let picture: [UInt8] =
    [0, 0, 1, 0xB8, 0, 8, 0, 0] + [0, 0, 1, 0x00, 0, 0x0F, 0xFF, 0xF8] + [0, 0, 1, 0x01, 0x22, 0x33]

  /// A PES packet of stream `id` with a PTS (MPEG-2 header, or MPEG-1 style) and `payload`.
  static func pes(_ id: UInt8, pts: Int, mpeg2: Bool = true, _ payload: [UInt8]) -> [UInt8] {
    let header: [UInt8] = mpeg2 ? [0x80, 0x80, 5] + timestamp(pts) : timestamp(pts)
    return [0, 0, 1, id] + be16(header.count + payload.count) + header + payload
  }

  /// A program stream of `packs` packs, each with a video packet (the first holding the
  /// sequence header) and an audio packet, 1 s apart; then the end code.
  static func programStream(mpeg2: Bool = true, packs: Int = 3, endCode: Bool = true) -> [UInt8] {
    var bytes: [UInt8] = []
    for index in 0..<packs {
      bytes += packHeader(clock: index * 90_000, mpeg2: mpeg2)
      if index == 0 { bytes += [0, 0, 1, 0xBB] + be16(6) + [0x80, 0x1B, 0x83, 0x04, 0xE1, 0xFF] }
      let video = (index == 0 ? sequenceHeader() : []) + picture
      bytes += pes(0xE0, pts: 3_600 + index * 90_000, mpeg2: mpeg2, video)
      bytes += pes(0xC0, pts: 3_600 + index * 90_000, mpeg2: mpeg2, fill(20, 0x55))
    }
    if endCode { bytes += [0, 0, 1, 0xB9] }
    return bytes
  }

  /// A video elementary stream: sequence header, `pictures` pictures, sequence end code.
  static func videoStream(pictures: Int = 5, endCode: Bool = true) -> [UInt8] {
    var bytes = sequenceHeader(width: 640, height: 480)
    for _ in 0..<pictures { bytes += picture }
    return bytes + (endCode ? [0, 0, 1, 0xB7] : [])
  }

  // MARK: - Audio

  /// An ID3v2.3 tag with `body` bytes of (zero) content.
  static func id3(body: Int) -> [UInt8] {
    ascii("ID3") + [3, 0, 0] + [
      UInt8(body >> 21 & 0x7F), UInt8(body >> 14 & 0x7F), UInt8(body >> 7 & 0x7F), UInt8(body & 0x7F),
    ]
      + fill(body)
  }

  /// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, joint stereo: 417-byte frames.
  static let mp3Header: [UInt8] = [0xFF, 0xFB, 0x90, 0x44]

  /// An MP3: optional ID3v2 tag, `frames` frames (the first optionally a Xing frame carrying the
  /// count), optional ID3v1 tag.
  static func mp3(frames: Int = 10, tag: Int? = nil, xing: Bool = false, id3v1: Bool = false) -> [UInt8] {
    var bytes = tag.map { id3(body: $0) } ?? []
    for index in 0..<frames {
      var frame = mp3Header + fill(413)
      if xing && index == 0 {
        let at = 4 + 32
        frame.replaceSubrange(at..<(at + 12), with: ascii("Xing") + be32(1) + be32(frames - 1))
      }
      bytes += frame
    }
    if id3v1 { bytes += ascii("TAG") + fill(125, 0x20) }
    return bytes
  }

  /// An ADTS frame: AAC-LC, 44.1 kHz, mono, `length` bytes in all.
  static func adtsFrame(length: Int = 200) -> [UInt8] {
    [
      0xFF, 0xF1, 0x50, 0x40 | UInt8(length >> 11 & 0x03), UInt8(length >> 3 & 0xFF),
      UInt8(length & 0x07) << 5 | 0x1F, 0xFC,
    ]
      + fill(length - 7, 0x21)
  }

  /// An ADTS stream of `frames` frames.
  static func adts(frames: Int = 10) -> [UInt8] {
    (0..<frames).flatMap { _ in adtsFrame() }
  }

  /// A WAV: PCM 16-bit mono 8 kHz, `samples` samples; `declared` overrides the data size.
  static func wav(samples: Int = 8_000, declared: Int? = nil, extraChunk: Bool = true) -> [UInt8] {
    let data = fill(samples * 2, 0x01)
    let fmt = ascii("fmt ") + le32(16) + le16(1) + le16(1) + le32(8_000) + le32(16_000) + le16(2) + le16(16)
    let list = extraChunk ? ascii("LIST") + le32(5) + ascii("INFOx") + [0] : []
    let body = ascii("WAVE") + list + fmt + ascii("data") + le32(declared ?? data.count) + data
    return ascii("RIFF") + le32(body.count) + body
  }

  /// A CAF: LPCM 16-bit mono 8 kHz, `frames` frames; `dataSize` overrides the data chunk's size
  /// (e.g. -1).
  static func caf(frames: Int = 8_000, dataSize: Int? = nil) -> [UInt8] {
    let rate = be64(Int(Double(8_000).bitPattern))
    let desc =
      ascii("desc") + be64(32) + rate + ascii("lpcm") + be32(0x0C) + be32(2) + be32(1) + be32(1) + be32(16)
    let samples = fill(frames * 2, 0x02)
    return ascii("caff") + be16(1) + be16(0) + desc + ascii("data") + be64(dataSize ?? samples.count + 4)
      + be32(0) + samples
  }

  /// Every builder's default sample, with the format it is.
  static var all: [(name: String, format: ProbedFormat, bytes: [UInt8])] {
    [
      ("jpeg", .jpeg, jpeg()), ("jpeg-progressive", .jpeg, jpeg(frameMarker: 0xC2)),
      ("png", .png, png()), ("png-palette", .png, png(depth: 4, colourType: 3)),
      ("gif", .gif, gif(frames: 3)),
      ("tiff-le", .tiff, tiff()), ("tiff-be", .tiff, tiff(littleEndian: false, pages: 2)),
      ("mp4", .isoBMFF, movie(audio: true)), ("mp4-faststart", .isoBMFF, movie(moovFirst: true)),
      ("mov-no-ftyp", .isoBMFF, movie(major: nil, moovFirst: true)),
      ("mp4-fragmented", .isoBMFF, fragmentedMovie()),
      ("mpeg2-ps", .mpegProgramStream, programStream()),
      ("mpeg1-ps", .mpegProgramStream, programStream(mpeg2: false)),
      ("m2v", .mpegVideoStream, videoStream()),
      ("mp3", .mp3, mp3(tag: 100)), ("mp3-xing", .mp3, mp3(xing: true, id3v1: true)),
      ("adts", .adts, adts()),
      ("wav", .wav, wav(samples: 200)), ("caf", .caf, caf(frames: 200)),
    ]
  }
}
