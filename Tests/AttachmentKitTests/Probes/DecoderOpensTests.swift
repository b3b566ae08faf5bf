import Foundation
import TestTraits
import Testing

@testable import AttachmentKit

/// Issue 52, item 3: accepted means a decoder can open it. Each of these files in `Samples/repro` is a
/// bundled sample with a few bits flipped (zzuf) that the probes accepted and ffmpeg (or libpng)
/// cannot open; each is refused now, with the error its damage calls for, while the sample it
/// came from still validates.
@Suite("Accepted means a decoder can open it", .cpuBound)
struct DecoderOpensTests {
  /// `Samples/repro`, where every kept fuzz finding lives (``Samples/repro(_:)``).
  static let reproDirectory = Samples.reproDirectory

  /// One repro: its file, the sample it was mutated from, the refusal's code and a piece of
  /// its message.
  struct Repro: Sendable, CustomTestStringConvertible {
    let file: String
    let sample: String
    let code: AttachmentError.Code
    let message: String
    var testDescription: String { file }
  }

  static let repros: [Repro] = [
    // dref declares no entry (and its one entry 65,548 bytes): ffmpeg "error reading header …
    // Invalid data found".
    Repro(
      file: "139_mp4-hevc.mp4", sample: "mp4-hevc.mp4", code: .unsupportedType,
      message: "The file is malformed: dref declares 0 data references in 20 bytes."),
    // stts declares 65,536 entries in 8 bytes: ffmpeg reads on to the end of the file.
    Repro(
      file: "445_mp4-fragmented.mp4", sample: "mp4-fragmented.mp4", code: .unsupportedType,
      message: "The file is malformed: box 'stts' declares 65536 entries, more than its 8 bytes hold."),
    // WAVE_FORMAT_EXTENSIBLE whose SubFormat GUID ends 00A2… instead of 00AA…: no decoder.
    Repro(
      file: "883_wav-extensible-pcm24.wav", sample: "wav-extensible-pcm24.wav", code: .unsupportedCodec,
      message:
        "The audio is WAVE_FORMAT_EXTENSIBLE audio of an unknown sub-format, which iOS does not decode."),
    // COMM says 8,193 channels: ffmpeg "Too many channels: 8193".
    Repro(
      file: "185_aifc-ulaw.aifc", sample: "aifc-ulaw.aifc", code: .unsupportedType,
      message:
        "The file is malformed: AIFF COMM chunk declares 8193 channels, outside the 1-64 a decoder opens."),
    // A flipped bit in the IDAT stream: "inflate returned error -3".
    Repro(
      file: "52_png-rgba.png", sample: "png-rgba.png", code: .unsupportedType,
      message: "The file is malformed: PNG image data does not inflate"),
    // Seed 12 of scripts/fuzz-accepted.sh: libnsgif (vips) "Invalid frame data".
    Repro(
      file: "s12_gif-static.gif", sample: "gif-static.gif", code: .unsupportedType,
      message:
        "The file is malformed: GIF image data is damaged: LZW code 61 (code 15) names a table entry not yet made (the next is 46)."
    ),
    // libtiff: "LZWDecode: Not enough data at scanline 0 (short 2742 bytes)".
    Repro(
      file: "s2_tiff-little-endian.tiff", sample: "tiff-little-endian.tiff", code: .unsupportedType,
      message: "The file is malformed: TIFF strip 0 at offset 8: LZW data decodes to 6474 of the 9216 bytes"),
    // libtiff: "Using code not yet in table".
    Repro(
      file: "s16_tiff-big-endian.tiff", sample: "tiff-big-endian.tiff", code: .unsupportedType,
      message: "The file is malformed: TIFF strip 0 at offset 8: LZW code 270 is not yet in the table"),
    // libtiff: "Compression scheme 2053 strip decoding is not implemented".
    Repro(
      file: "s17_tiff-little-endian.tiff", sample: "tiff-little-endian.tiff", code: .unsupportedType,
      message: "The file is malformed: TIFF compression 2053 is not one a decoder implements."),
    // libjpeg: "Fractional sampling not implemented yet" (components 2x2, 1x1, 1x3).
    Repro(
      file: "s7_jpeg-baseline.jpg", sample: "jpeg-baseline.jpg", code: .unsupportedType,
      message:
        "The file is malformed: JPEG frame's sampling factors [\"2x2\", \"1x1\", \"1x3\"] are not whole multiples"
    ),
    // stsz says 8 bytes for the third sample, 4 short: every later sample of its chunk starts
    // inside a NAL unit. FFmpeg: "Invalid NAL unit size (8 > 4)", and no frame decodes.
    Repro(
      file: "s23_mp4-avc1.mp4", sample: "mp4-avc1.mp4", code: .unsupportedType,
      message:
        "The file is malformed: track 1's sample 3 has a NAL unit of 8 bytes where 4 remain (Invalid NAL unit size)."
    ),
    // An emulation prevention byte of the hvcC's SPS flipped (00 00 03 → 00 00 23): the
    // picture size reads 0x321. FFmpeg: "Picture size 0x321 is invalid", "SPS 0 does not exist".
    Repro(
      file: "s4_mp4-hevc.mp4", sample: "mp4-hevc.mp4", code: .unsupportedType,
      message: "The file is malformed: HEVC SPS says a picture of 0x321 (Picture size 0x321 is invalid)."),
    // The packet table's third size lost 256 bytes: the later packets start out of place.
    // FFmpeg: decoding errors in most packets, then "Input/output error".
    Repro(
      file: "s3_caf-alac.caf", sample: "caf-alac.caf", code: .unsupportedType,
      message:
        "The file is malformed: CAF packet table's 6 packets add up to 10243 bytes; the data chunk holds 10499."
    ),
    // The packet count's top byte flipped: 2^31 + 6 packets in 36 bytes. FFmpeg: "error reading
    // packet table", the header does not open.
    Repro(
      file: "s9_caf-alac.caf", sample: "caf-alac.caf", code: .unsupportedType,
      message: "The file is malformed: CAF packet table declares 2147483654 packets; its 36 bytes hold 6"),
    // The second DQT's length 67 → 3 (fuzz seed 35): libjpeg-turbo reads all 64 values of its
    // table on past the segment: "Bogus marker length" (libvips: VipsJpeg: Bogus marker length).
    Repro(
      file: "s35_jpeg-exif.jpg", sample: "jpeg-exif.jpg", code: .unsupportedType,
      message:
        "The file is malformed: JPEG DQT table 1 has 0 of its 64 values in its segment (Bogus marker length)."
    ),
    // wValidBitsPerSample 24 → 8216 (a flipped bit): FFmpeg takes it as the sample size and
    // finds no PCM decoder of 1,027 bytes: "Decoder (codec none) not found" (fuzz seed 32).
    Repro(
      file: "wav-extensible-valid-bits.wav", sample: "wav-extensible-pcm24.wav", code: .unsupportedType,
      message: "The bytes begin like audio/x-wav but their structure is not valid audio/x-wav."),
    // StripByteCounts twice: libtiff reads the first (16,432 bytes, past the end of the file).
    Repro(
      file: "s21_tiff-big-endian.tiff", sample: "tiff-big-endian.tiff", code: .truncated,
      message: "The file is cut short: TIFF strip at offset 8 declares 16432 bytes, only 1176 remain"),
  ]

  @Test("each repro is refused with its code and message; its sample still validates", arguments: repros)
  func refused(_ repro: Repro) throws {
    do {
      let validation = try Validator().validate(file: Self.reproDirectory + "/" + repro.file)
      Issue.record("accepted: \(validation)")
    } catch {
      #expect(error.code == repro.code, "\(error)")
      #expect(error.message.hasPrefix(repro.message), "\(error.message)")
      #expect(error.isRejection)
    }
    _ = try Validator().validate(file: Samples.path(repro.sample))
  }

  /// The inspection of `bytes` as `format`.
  static func inspect(_ bytes: [UInt8], as format: ProbedFormat) -> Result<ProbeReport, ProbeProblem> {
    MediaProbe.inspect(file: FileBytes(bytes: bytes), as: format)
  }

  /// Whether `result` is a malformed verdict whose detail contains `text`.
  static func malformed(_ result: Result<ProbeReport, ProbeProblem>, _ text: String) -> Bool {
    guard case .failure(.malformed(let detail)) = result else { return false }
    return detail.contains(text)
  }

  @Test(
    "AIFF, WAV and CAF: channels over 64 or a rate outside 1 kHz-768 kHz are refused, 64 channels are not")
  func audioBounds() throws {
    var aiff = try Samples.bytes("aifc-ulaw.aifc")
    let comm = try #require(AIFFProbeTests.chunk("COMM", in: aiff)) + 8
    aiff[comm] = 0
    aiff[comm + 1] = 64
    #expect((try? Self.inspect(aiff, as: .aiff).get()) != nil)
    aiff[comm + 1] = 65
    #expect(Self.malformed(Self.inspect(aiff, as: .aiff), "65 channels"))

    var wav = ProbeFixtures.wav()
    let fmt = 12 + 14 + 8  // RIFF header, LIST chunk (5 bytes, padded), fmt header
    wav[fmt + 2] = 65
    #expect(Self.malformed(Self.inspect(wav, as: .wav), "65 channels"))
    wav = ProbeFixtures.wav()
    wav.replaceSubrange((fmt + 4)..<(fmt + 8), with: ProbeFixtures.le32(800_000))
    #expect(Self.malformed(Self.inspect(wav, as: .wav), "sample rate of 800000.0 Hz"))

    var caf = ProbeFixtures.caf()
    caf.replaceSubrange(44..<48, with: ProbeFixtures.be32(200))
    #expect(Self.malformed(Self.inspect(caf, as: .caf), "200 channels"))
    caf = ProbeFixtures.caf()
    caf.replaceSubrange(20..<28, with: ProbeFixtures.be64(Int(Double(500).bitPattern)))
    #expect(Self.malformed(Self.inspect(caf, as: .caf), "sample rate of 500.0 Hz"))
  }

  @Test("WAVE_FORMAT_EXTENSIBLE takes the standard PCM, float, A-law and μ-law GUIDs only")
  func extensibleGUID() throws {
    let sample = try Samples.bytes("wav-extensible-pcm24.wav")
    let guid = 20 + 24  // the fmt chunk's body, then the SubFormat at 24
    #expect(sample[guid] == 1 && sample[guid + 11] == 0xAA)
    let accepted = try #require(try? Self.inspect(sample, as: .wav).get())
    #expect(accepted.streams.map(\.codec) == ["1"])
    // IEEE float through the standard GUID: its own tag. MS ADPCM: not one of the four, so
    // the extensible tag, which the codec table refuses.
    var float = sample
    float[guid] = 3
    float[20 + 18] = 32  // a float's valid bits: 32 (FFmpeg has no 3-byte float decoder)
    #expect((try? Self.inspect(float, as: .wav).get())?.streams.map(\.codec) == ["3"])
    var adpcm = sample
    adpcm[guid] = 2
    #expect((try? Self.inspect(adpcm, as: .wav).get())?.streams.map(\.codec) == ["65534"])
    // An unknown GUID: the extensible tag, which nothing decodes.
    var unknown = sample
    unknown[guid + 15] ^= 0x01
    #expect((try? Self.inspect(unknown, as: .wav).get())?.streams.map(\.codec) == ["65534"])
    // wValidBitsPerSample (at 18): 20 of 24 bits is a whole 3 bytes; 8216 bits is no sample
    // size a decoder has; a float of 3 bytes neither.
    var twenty = sample
    twenty[20 + 18] = 20
    #expect((try? Self.inspect(twenty, as: .wav).get()) != nil)
    var huge = sample
    huge[20 + 19] = 0x20
    #expect((try? Self.inspect(huge, as: .wav).get()) == nil)
    // cbSize (at 16) under the extension's 22 bytes: FFmpeg does not read the GUID.
    var shortExtension = sample
    shortExtension[20 + 16] = 20
    #expect((try? Self.inspect(shortExtension, as: .wav).get())?.streams.map(\.codec) == ["65534"])
    var narrowFloat = float
    narrowFloat[20 + 18] = 24
    #expect((try? Self.inspect(narrowFloat, as: .wav).get()) == nil)
  }

  @Test("ISO BMFF: a table's entries past its box, an stsd or dref count out of bounds, stsc past stco")
  func sampleTables() throws {
    let sample = try Samples.bytes("mp4-avc1.mp4")
    #expect((try? Self.inspect(sample, as: .isoBMFF).get()) != nil)
    /// The offset of the first `type` box's type field, if any.
    func find(_ type: String) -> Int? {
      let needle = Array(type.utf8)
      return (0..<(sample.count - 4)).first { Array(sample[$0..<$0 + 4]) == needle }
    }
    /// The sample with the 32-bit count after the first `type` box's version and flags set to
    /// `value`.
    func patched(_ type: String, to value: Int) throws -> [UInt8] {
      let at = try #require(find(type), "\(type)")
      var bytes = sample
      bytes.replaceSubrange((at + 8)..<(at + 12), with: ProbeFixtures.be32(value))
      return bytes
    }
    for table in ["stts", "stss", "ctts", "stsc"] where find(table) != nil {
      let bytes = try patched(table, to: 1_000_000)
      #expect(
        Self.malformed(Self.inspect(bytes, as: .isoBMFF), "'\(table)' declares 1000000 entries"), "\(table)")
    }
    #expect(Self.malformed(Self.inspect(try patched("stsd", to: 0), as: .isoBMFF), "stsd declares 0"))
    #expect(Self.malformed(Self.inspect(try patched("stsd", to: 2), as: .isoBMFF), "holds 1"))
    #expect(Self.malformed(Self.inspect(try patched("dref", to: 0), as: .isoBMFF), "dref declares 0"))
    // The last stsc run starting at chunk 1,000 of a track with fewer chunks.
    let stsc = try #require(find("stsc"))
    let entries =
      Int(sample[stsc + 8]) << 24 | Int(sample[stsc + 9]) << 16 | Int(sample[stsc + 10]) << 8
      | Int(sample[stsc + 11])
    var bytes = sample
    let last = stsc + 12 + (entries - 1) * 12
    bytes.replaceSubrange(last..<(last + 4), with: ProbeFixtures.be32(1_000))
    #expect(Self.malformed(Self.inspect(bytes, as: .isoBMFF), "stsc starts a run at chunk 1000"))
  }

  @Test("H.264: a sample size off by 4 bytes leaves the next sample's NAL units overrunning it")
  func nalUnits() throws {
    let sample = try Samples.bytes("mp4-avc1.mp4")
    let stsz = try #require(
      (0..<(sample.count - 4)).first { Array(sample[$0..<$0 + 4]) == Array("stsz".utf8) })
    let third = stsz + 16 + 2 * 4  // the entries start after version, size and count
    let size =
      Int(sample[third]) << 24 | Int(sample[third + 1]) << 16 | Int(sample[third + 2]) << 8
      | Int(sample[third + 3])
    var bytes = sample
    bytes.replaceSubrange(third..<(third + 4), with: ProbeFixtures.be32(size - 4))
    #expect(Self.malformed(Self.inspect(bytes, as: .isoBMFF), "has a NAL unit of"))
    #expect(Self.malformed(Self.inspect(bytes, as: .isoBMFF), "(Invalid NAL unit size)"))
  }

  @Test("HEVC: the SPS is read past its emulation prevention bytes to the picture size")
  func hevcParameterSets() {
    // ue(v) 0, 1, 2, 3: 1 010 011 00100.
    var bits = RBSPBits([0xA6, 0x40])
    #expect((0..<4).map { _ in bits.exponentialGolomb() } == [0, 1, 2, 3])
    var escaped = RBSPBits([0x00, 0x00, 0x03, 0x01])
    #expect(escaped.read(24) == 1)
    // mp4-hevc.mp4's SPS (160x120), and the same with its second emulation prevention byte gone.
    let sps: [UInt8] = [
      0x42, 0x01, 0x01, 0x01, 0x60, 0x00, 0x00, 0x03, 0x00, 0x90, 0x00, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00,
      0x1E,
      0xA0, 0x14, 0x20, 0x20, 0x7C, 0xB9,
    ]
    #expect(HEVCParameterSets.spsProblem(sps) == nil)
    var broken = sps
    broken[15] = 0x23
    #expect(HEVCParameterSets.spsProblem(broken)?.contains("Picture size 0x321 is invalid") == true)
  }

  @Test("CAF: a packet table of variable packets fits its chunk and adds up to the data")
  func cafPacketTable() throws {
    let sample = try Samples.bytes("caf-alac.caf")
    #expect((try? Self.inspect(sample, as: .caf).get()) != nil)
    // The last byte of the file is the last packet's size (one byte): one more makes the sum
    // one over the data.
    var bytes = sample
    bytes[bytes.count - 1] += 1
    #expect(
      Self.malformed(Self.inspect(bytes, as: .caf), "add up to 10500 bytes; the data chunk holds 10499"))
  }

  @Test("PNG: IHDR's row bytes, Adam7 included; image data short or broken is refused")
  func pngImageData() throws {
    #expect(
      PNGImageData.filteredBytes(width: 64, height: 48, depth: 8, colour: 6, interlaced: false) == 48 * 257)
    #expect(PNGImageData.filteredBytes(width: 3, height: 1, depth: 1, colour: 0, interlaced: false) == 2)
    // 1×1 interlaced: only the first pass has a pixel.
    #expect(PNGImageData.filteredBytes(width: 1, height: 1, depth: 8, colour: 2, interlaced: true) == 4)
    // 8×8 grey: passes of 1×1, 1×1, 2×1, 2×2, 4×2, 4×4, 8×4 pixels.
    #expect(
      PNGImageData.filteredBytes(width: 8, height: 8, depth: 8, colour: 0, interlaced: true)
        == 2 + 2 + 3 + 2 * 3 + 2 * 5 + 4 * 5 + 4 * 9)
    #expect((try? Self.inspect(ProbeFixtures.png(), as: .png).get()) != nil)
    var short = PNGProbe.signature
    short += ProbeFixtures.pngChunk(
      "IHDR", ProbeFixtures.be32(64) + ProbeFixtures.be32(48) + [8, 6, 0, 0, 0])
    let rows = ProbeFixtures.pngRows(width: 64, height: 47, depth: 8, colourType: 6)
    short +=
      ProbeFixtures.pngChunk("IDAT", ProbeFixtures.zlibStored(rows)) + ProbeFixtures.pngChunk("IEND", [])
    #expect(Self.malformed(Self.inspect(short, as: .png), "inflates to 12079 bytes, fewer than the 12336"))
    var palette = ProbeFixtures.png(depth: 4, colourType: 3)
    #expect((try? Self.inspect(palette, as: .png).get()) != nil)
    palette[8 + 25 + 8] ^= 0x01  // a palette byte: libpng's "PLTE: CRC error"
    #expect(Self.malformed(Self.inspect(palette, as: .png), "PLTE CRC does not match"))
    var broken = ProbeFixtures.png()
    broken[8 + 25 + 8] = 0x79  // the zlib header's first byte: a wrong check value
    #expect(Self.malformed(Self.inspect(broken, as: .png), "does not inflate after 0 of 12336 bytes"))
  }
}

/// The JPEG segments libjpeg refuses before decoding (issue 52, item 3, "if time permits").
@Suite("JPEG tables and scan headers libjpeg refuses", .cpuBound)
struct JPEGTablesTests {
  /// The inspection of `bytes` as JPEG.
  static func inspect(_ bytes: [UInt8]) -> Result<ProbeReport, ProbeProblem> {
    MediaProbe.inspect(file: FileBytes(bytes: bytes), as: .jpeg)
  }

  /// Whether `bytes` is refused malformed with `text` in the detail.
  static func refused(_ bytes: [UInt8], _ text: String) -> Bool {
    DecoderOpensTests.malformed(inspect(bytes), text)
  }

  /// The offset of the first `FF marker` in `bytes` after SOI.
  static func offset(of marker: UInt8, in bytes: [UInt8]) -> Int? {
    (2..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == marker }
  }

  @Test("the fixtures and the bundled JPEGs pass; each kind of bad table or scan header is refused")
  func tables() throws {
    for fixture in [ProbeFixtures.jpeg(), ProbeFixtures.jpeg(frameMarker: 0xC2)] {
      #expect((try? Self.inspect(fixture).get()) != nil)
    }
    for file in ["jpeg-baseline.jpg", "jpeg-progressive.jpg", "jpeg-exif.jpg", "jpeg-no-app-segment.jpg"] {
      #expect((try? Self.inspect(try Samples.bytes(file)).get()) != nil, "\(file)")
    }
    let jpeg = ProbeFixtures.jpeg()
    let dht = try #require(Self.offset(of: 0xC4, in: jpeg))
    var bytes = jpeg
    bytes[dht + 4] = 0x05  // class 0, index 5
    #expect(Self.refused(bytes, "Bogus DHT index"))
    bytes = jpeg
    bytes[dht + 5] = 3  // three 1-bit codes
    #expect(Self.refused(bytes, "Bogus Huffman table definition"))
    bytes = jpeg
    bytes[dht + 21] = 16  // a DC symbol of 16
    #expect(Self.refused(bytes, "DC table has a symbol over 15"))
    let dqt = try #require(Self.offset(of: 0xDB, in: jpeg))
    bytes = jpeg
    bytes[dqt + 4] = 0x04
    #expect(Self.refused(bytes, "Bogus DQT index"))
    bytes = jpeg
    bytes[dqt + 3] = 131  // the second table a value short: libjpeg-turbo reads its 64 past the end
    #expect(
      Self.refused(bytes, "JPEG DQT table 1 has 63 of its 64 values in its segment (Bogus marker length)"))
    bytes = jpeg
    bytes[dqt + 4 + 65] = 0x02  // the second table is 2, so table 1 is never defined
    #expect(Self.refused(bytes, "quantisation table 1, which is not defined"))
    let sos = try #require(Self.offset(of: 0xDA, in: jpeg))
    bytes = jpeg
    bytes[sos + 5] = 9  // a component the frame does not have
    #expect(Self.refused(bytes, "names component 9"))
    bytes = jpeg
    bytes[sos + 4] = 2  // two components in a 12-byte header
    #expect(Self.refused(bytes, "Bogus marker length"))
    var progressive = ProbeFixtures.jpeg(frameMarker: 0xC2)
    let scan = try #require(Self.offset(of: 0xDA, in: progressive))
    progressive[scan + 12] = 0x3F  // a DC scan with Se = 63
    #expect(Self.refused(progressive, "Invalid progressive parameters"))
    bytes = jpeg
    bytes.insert(contentsOf: [0xFF, 0xDE, 0x00, 0x04, 0x00, 0x00], at: dqt)
    #expect(Self.refused(bytes, "marker FFDE, which libjpeg does not know"))
    let sof = try #require(Self.offset(of: 0xC0, in: jpeg))
    bytes = jpeg
    bytes[sof + 11] = 0x13  // the first component 1x3 (the others 1x1): still whole multiples
    #expect((try? Self.inspect(bytes).get()) != nil)
    bytes[sof + 14] = 0x12  // the second 1x2: 3 is not a multiple of 2
    #expect(Self.refused(bytes, "Fractional sampling not implemented yet"))
    bytes[sof + 14] = 0x15
    #expect(Self.refused(bytes, "Bogus sampling factors"))
  }

  @Test(
    "an APP segment declared short: stray bytes before the next marker pass, FF and an unknown code do not")
  func shortAppSegment() throws {
    let sample = try Samples.bytes("jpeg-short-app0.jpg")
    #expect(Self.refused(sample, "FF80 at offset 20 where libjpeg reads the marker after an APP segment"))
    var stray = ProbeFixtures.jpeg()
    stray.insert(contentsOf: [0x00, 0xFF, 0x00, 0x41], at: 20)  // FF00 is skipped as libjpeg does
    #expect((try? Self.inspect(stray).get()) != nil)
    stray[21 + 1] = 0x80
    #expect(Self.refused(stray, "Unsupported marker type 0x80"))
  }
}
