/// An MPEG audio frame header (ISO/IEC 11172-3, 13818-3): 11-bit sync, version (1, 2 or 2.5;
/// not reserved), layer I, II or III, bitrate index 1...14, sample rate index 0...2, emphasis
/// not reserved. iOS plays Layer III only (see ``CodecTable``): Layers I and II are read so
/// that such a file is refused for its codec, naming the layer, not as unknown bytes.
struct MP3FrameHeader: AudioFrameHeader {
  /// An MPEG audio header is 4 bytes.
  static let headerSize = 4

  /// 10 for MPEG-1, 20 for MPEG-2, 25 for MPEG-2.5.
  let version: Int
  /// 1, 2 or 3.
  let layer: Int
  let sampleRate: Int
  let channels: Int
  let length: Int
  let samples: Int
  /// Bytes of side information after the header (for finding a Xing / Info tag); 0 for
  /// Layers I and II, which have none.
  let sideInfoSize: Int

  /// Bitrates in kbit/s by index (index 0 free, 15 bad): MPEG-1 Layers I, II, III, then
  /// MPEG-2/2.5 Layer I, then MPEG-2/2.5 Layers II and III.
  private static let rates: [[Int]] = [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
  ]
  /// MPEG-1 sample rates by index; MPEG-2 halves them, MPEG-2.5 quarters them.
  private static let baseSampleRates = [44_100, 48_000, 32_000]

  /// Parses the 4 bytes at `offset`; nil unless every field is valid.
  init?(_ reader: ByteReader, at offset: Int) {
    guard let word = reader.u32be(offset), word >> 21 == 0x7FF else { return nil }
    let versionBits = Int(word >> 19 & 0x03)
    let layerBits = Int(word >> 17 & 0x03)
    let bitrateIndex = Int(word >> 12 & 0x0F)
    let rateIndex = Int(word >> 10 & 0x03)
    guard versionBits != 1, layerBits != 0, (1...14).contains(bitrateIndex), rateIndex < 3,
      word & 0x03 != 2
    else { return nil }
    let mpeg1 = versionBits == 3
    version = mpeg1 ? 10 : (versionBits == 2 ? 20 : 25)
    layer = 4 - layerBits
    let table = mpeg1 ? layer - 1 : (layer == 1 ? 3 : 4)
    let bitsPerSecond = Self.rates[table][bitrateIndex] * 1_000
    sampleRate = Self.baseSampleRates[rateIndex] / (mpeg1 ? 1 : (versionBits == 2 ? 2 : 4))
    let mono = word >> 6 & 0x03 == 3
    channels = mono ? 1 : 2
    let padding = Int(word >> 9 & 0x01)
    switch layer {
    case 1:
      length = (12 * bitsPerSecond / sampleRate + padding) * 4
      samples = 384
      sideInfoSize = 0
    case 2:
      length = 144 * bitsPerSecond / sampleRate + padding
      samples = 1_152
      sideInfoSize = 0
    default:
      length = (mpeg1 ? 144 : 72) * bitsPerSecond / sampleRate + padding
      samples = mpeg1 ? 1_152 : 576
      sideInfoSize = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
    }
  }

  /// Same MPEG version, layer and sample rate.
  func continues(_ other: MP3FrameHeader) -> Bool {
    version == other.version && layer == other.layer && sampleRate == other.sampleRate
  }
}

/// Structural check of an MP3: optional ID3v2 tags, then MPEG audio frames (Layer III; or
/// Layer I or II, judged by their codec) chained by their computed lengths, then optional
/// APEv2 / ID3v1 tags.
enum MP3Probe {
  /// Identifies an MP3 from a prefix: after the ID3v2 tag(s), which must end inside the prefix,
  /// a valid frame confirmed by the next one (see `AudioFrameWalk.identify`), else the start of
  /// a chain of frames within 64 KiB (see ``firstFrame(_:)``). The duration comes from a Xing /
  /// Info or VBRI header when the first frame has one. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard let start = firstFrame(reader)?.start,
      let first = MP3FrameHeader(reader, at: start)
    else { return nil }
    var report = baseReport(first)
    if let frames = vbrFrameCount(reader, header: first, at: start) {
      report.durationSeconds = Double(frames) * Double(first.samples) / Double(first.sampleRate)
    }
    return report
  }

  /// Where the first frame is, and where the ID3v2 tags before it end: right after the tags
  /// and any zero padding (confirmed by the next frame), else the start of a chain of
  /// ``chainLength`` frames found by resynchronising from a little before the tags' end (a tag
  /// whose declared size runs into the first frame) to 64 KiB after it (junk an editor or a
  /// broken tag left: decoders skip it). A file that starts like another container is not
  /// searched. Nil when a tag runs past the bytes or no frame is found.
  static func firstFrame(_ reader: ByteReader) -> (tagsEnd: Int, start: Int)? {
    guard let (tagsEnd, start) = AudioTags.layout(reader) else { return nil }
    if AudioFrameWalk.identify(reader, at: start, as: MP3FrameHeader.self) != nil { return (tagsEnd, start) }
    guard tagsEnd > 0 || !AudioTags.startsLikeAnotherContainer(reader) else { return nil }
    let from = tagsEnd > 0 ? max(10, tagsEnd - maximumTagOverrun) : 0
    let limit = min(reader.count, tagsEnd + AudioTags.maximumPadding)
    var position = from
    while let candidate = reader.firstIndex(of: 0xFF, from: position, to: limit) {
      if AudioFrameWalk.chains(reader, at: candidate, frames: chainLength, as: MP3FrameHeader.self) {
        return (tagsEnd, candidate)
      }
      position = candidate + 1
    }
    return nil
  }

  /// Frames that must chain after junk before the first frame is believed.
  static let chainLength = 4
  /// How far before its declared end an ID3v2 tag is searched for the first frame.
  static let maximumTagOverrun = 256

  /// Checks a whole MP3: every frame chained to the end of the file (tags allowed, garbage
  /// skipped and noted, zero padding before the first frame up to
  /// `AudioTags.maximumPadding` and bytes after the last frame noted). Truncated when the ID3v2 tag or the last frame is cut; malformed
  /// without a frame or when most of the file is not frames. The duration is the audio frames
  /// counted (a Xing / Info frame excluded).
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard AudioTags.layout(reader) != nil else {
      return .failure(.truncated("MP3 ends inside its ID3v2 tag"))
    }
    guard let (tagsEnd, start) = firstFrame(reader) else {
      return .failure(.malformed("MP3 has no chain of valid frames within 64 KiB of its start"))
    }
    switch AudioFrameWalk.inspect(reader, from: start, as: MP3FrameHeader.self, name: "MP3") {
    case .failure(let problem):
      return .failure(problem)
    case .success(let tally):
      var report = baseReport(tally.first)
      let infoFrame = isInfoFrame(reader, header: tally.first, at: start) ? 1 : 0
      let frames = max(tally.frames - infoFrame, 0)
      // ffmpeg 5.1 decodes no sample from an MP3 whose one frame is its LAME / Xing info frame.
      guard frames > 0 else {
        return .failure(.noMedia("the MP3's only frame is its Xing / LAME info frame, which holds no audio"))
      }
      report.durationSeconds = Double(frames) * Double(tally.first.samples) / Double(tally.first.sampleRate)
      report.notes += leadingNotes(reader, tagsEnd: tagsEnd, start: start)
      if tally.skipped > 0 { report.notes.append("\(tally.skipped) bytes between MP3 frames skipped") }
      if tally.trailing > 0 {
        report.notes.append("\(tally.trailing) bytes after the last MP3 frame that are not audio (ignored)")
      }
      return .success(report)
    }
  }

  /// What lies between the end of the ID3v2 tags and the first frame, for a warning: zero
  /// padding, junk that is not audio, or a tag that claims the first bytes of the first frame.
  private static func leadingNotes(_ reader: ByteReader, tagsEnd: Int, start: Int) -> [String] {
    if start < tagsEnd {
      return [
        "the ID3v2 tag declares \(tagsEnd - start) bytes more than it holds: the first MP3 frame starts inside it (resynchronised)"
      ]
    }
    guard start > tagsEnd else { return [] }
    var zeros = true
    for offset in tagsEnd..<start where reader.u8(offset) != 0 {
      zeros = false
      break
    }
    return [
      zeros
        ? "\(start - tagsEnd) bytes of zero padding before the first MP3 frame (skipped)"
        : "\(start - tagsEnd) bytes before the first MP3 frame are not audio (skipped: decoders resynchronise)"
    ]
  }

  /// Whether the frame at `offset` is an info frame (a Xing / Info tag after the side
  /// information, or a VBRI tag 32 bytes after the header), whatever its flags say.
  private static func isInfoFrame(_ reader: ByteReader, header: MP3FrameHeader, at offset: Int) -> Bool {
    guard header.layer == 3 else { return false }
    let xing = offset + 4 + header.sideInfoSize
    return reader.matches(Array("Xing".utf8), at: xing) || reader.matches(Array("Info".utf8), at: xing)
      || reader.matches(Array("VBRI".utf8), at: offset + 36)
  }

  /// A report with the stream parameters of `header`.
  private static func baseReport(_ header: MP3FrameHeader) -> ProbeReport {
    var report = ProbeReport(format: .mp3)
    report.hasAudioTrack = true
    report.sampleRate = header.sampleRate
    report.channels = header.channels
    report.codecs = ["\(header.version == 10 ? "mpeg1" : "mpeg2")-layer\(header.layer)"]
    // Layer III is `mp3`; Layers I and II are `mp1` and `mp2`, as ffmpeg names them.
    report.streams = [MediaStream(kind: .audio, codec: "mp\(header.layer)")]
    return report
  }

  /// The frame count of a Xing / Info tag (after the side information) or a VBRI tag (32 bytes
  /// after the header) in the frame at `offset`, or nil when there is none.
  private static func vbrFrameCount(_ reader: ByteReader, header: MP3FrameHeader, at offset: Int)
    -> Int?
  {
    guard header.layer == 3 else { return nil }
    let xing = offset + 4 + header.sideInfoSize
    if reader.matches(Array("Xing".utf8), at: xing) || reader.matches(Array("Info".utf8), at: xing) {
      guard let flags = reader.u32be(xing + 4), flags & 0x01 != 0,
        let frames = reader.u32be(xing + 8), xing + 12 <= offset + header.length
      else { return nil }
      return Int(frames)
    }
    let vbri = offset + 36
    if reader.matches(Array("VBRI".utf8), at: vbri), let frames = reader.u32be(vbri + 14),
      vbri + 18 <= offset + header.length
    {
      return Int(frames)
    }
    return nil
  }
}
