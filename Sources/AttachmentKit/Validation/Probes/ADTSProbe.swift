/// An ADTS frame header: 12-bit sync 0xFFF, layer 00, sampling frequency index below 13,
/// frame length (header included) of at least 7 bytes (9 with a CRC).
struct ADTSFrameHeader: AudioFrameHeader {
  /// An ADTS header without CRC is 7 bytes.
  static let headerSize = 7

  let sampleRate: Int
  let channels: Int
  let length: Int
  let samples: Int
  /// MPEG-4 (0) or MPEG-2 (1) identifier bit.
  let mpegID: Int
  /// Audio object type minus one (0 = Main, 1 = LC, 2 = SSR, 3 = LTP).
  let profile: Int
  /// The sampling frequency index.
  let frequencyIndex: Int

  /// Sample rates by sampling frequency index (13 and up are reserved).
  private static let sampleRates = [
    96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350,
  ]

  /// Parses the 7 bytes at `offset`; nil unless sync, layer, frequency and length are valid.
  init?(_ reader: ByteReader, at offset: Int) {
    guard let word = reader.u32be(offset), word >> 16 & 0xFFF6 == 0xFFF0,
      let tail = reader.u24be(offset + 4)
    else { return nil }
    let index = Int(word >> 10 & 0x0F)
    let frame = Int(word & 0x03) << 11 | Int(tail >> 13)
    let minimum = word >> 16 & 0x01 == 1 ? 7 : 9
    guard index < Self.sampleRates.count, frame >= minimum else { return nil }
    sampleRate = Self.sampleRates[index]
    frequencyIndex = index
    mpegID = Int(word >> 19 & 0x01)
    profile = Int(word >> 14 & 0x03)
    let configuration = Int(word >> 6 & 0x07)
    channels = configuration == 7 ? 8 : configuration
    length = frame
    samples = 1_024 * (Int(tail & 0x03) + 1)
  }

  /// Same identifier bit, profile, frequency and channels.
  func continues(_ other: ADTSFrameHeader) -> Bool {
    mpegID == other.mpegID && profile == other.profile && frequencyIndex == other.frequencyIndex
      && channels == other.channels
  }
}

/// Structural check of AAC in ADTS: optional ID3v2 tags, then ADTS frames chained by their
/// frame lengths, then optional tags.
enum ADTSProbe {
  /// Identifies ADTS from a prefix: after any ID3v2 tag(s) inside the prefix, a valid frame
  /// confirmed by the next one. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard let start = AudioTags.framesStart(reader),
      let first = AudioFrameWalk.identify(reader, at: start, as: ADTSFrameHeader.self)
    else { return nil }
    return baseReport(first)
  }

  /// Checks a whole ADTS stream: every frame chained to the end of the file. Truncated when the
  /// last frame (or the ID3v2 tag) is cut; malformed without frames or when most of the file
  /// is not frames. The duration is the frames' samples over the sample rate.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard let start = AudioTags.framesStart(reader) else {
      return .failure(.truncated("ADTS ends inside its ID3v2 tag"))
    }
    switch AudioFrameWalk.inspect(reader, from: start, as: ADTSFrameHeader.self, name: "ADTS") {
    case .failure(let problem):
      return .failure(problem)
    case .success(let tally):
      var report = baseReport(tally.first)
      report.durationSeconds =
        Double(tally.frames) * Double(tally.first.samples) / Double(tally.first.sampleRate)
      if tally.skipped > 0 { report.notes.append("\(tally.skipped) bytes between ADTS frames skipped") }
      if tally.trailing > 0 {
        report.notes.append("\(tally.trailing) bytes after the last ADTS frame that are not audio (ignored)")
      }
      return .success(report)
    }
  }

  /// A report with the stream parameters of `header`.
  private static func baseReport(_ header: ADTSFrameHeader) -> ProbeReport {
    var report = ProbeReport(format: .adts)
    report.hasAudioTrack = true
    report.sampleRate = header.sampleRate
    report.channels = header.channels > 0 ? header.channels : nil
    let profiles = ["aac-main", "aac-lc", "aac-ssr", "aac-ltp"]
    report.codecs = [profiles[header.profile & 0x03]]
    // ADTS profile = MPEG-4 audio object type - 1 (ISO/IEC 14496-3, 1.A.2.1).
    report.streams = [MediaStream(kind: .audio, codec: "mp4a.40.\((header.profile & 0x03) + 1)")]
    return report
  }
}
