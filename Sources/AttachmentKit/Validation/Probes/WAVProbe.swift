/// Structural check of a RIFF WAVE file: "RIFF" size "WAVE", chunks (id, little-endian size,
/// data padded to even length), a valid `fmt ` chunk before the `data` chunk.
///
/// The RIFF size is not trusted (writers get it wrong; the chunks are walked to the end of the
/// file instead). A `data` chunk that declares more bytes than the file holds is truncated;
/// the exception is the "unknown length" placeholder of streaming writers (0xFFFFFFFF, or 0
/// with a RIFF size of 0 / 0xFFFFFFFF), where the data runs to the end of the file (noted).
/// Chunks after `data` that are cut off (metadata) are only noted. RF64 is not accepted.
enum WAVProbe {
  /// The parsed `fmt ` chunk.
  struct Format {
    /// The format tag (1 PCM, 3 float, 6 A-law, 7 µ-law, ...), resolved through
    /// WAVE_FORMAT_EXTENSIBLE's sub-format.
    let tag: Int
    let channels: Int
    let sampleRate: Int
    let byteRate: Int
  }

  /// Chunk ids read here.
  private static let fmt = ProbeMath.code("fmt ")
  private static let data = ProbeMath.code("data")

  /// Identifies WAV from a prefix: "RIFF"…"WAVE", a first chunk header with a text id, chunks
  /// that chain inside the prefix, and when `fmt ` is in the prefix, valid values. The duration
  /// comes from the data chunk's declared size when its header is in the prefix. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard reader.matches(Array("RIFF".utf8), at: 0), reader.matches(Array("WAVE".utf8), at: 8),
      let firstID = reader.u32be(12), ProbeMath.isPrintable(firstID), reader.contains(12, 8)
    else { return nil }
    var report = ProbeReport(format: .wav)
    report.hasAudioTrack = true
    var position = 12
    var format: Format?
    for _ in 0..<1_024 {
      guard let id = reader.u32be(position), let size = reader.u32le(position + 4) else { break }
      guard ProbeMath.isPrintable(id) else { return nil }
      if id == fmt {
        guard reader.contains(position + 8, 16) else { break }
        guard let parsed = parseFormat(reader, at: position + 8, size: Int(size)) else { return nil }
        format = parsed
        fill(&report, parsed)
      }
      if id == data {
        if let format, size != 0, size != 0xFFFF_FFFF {
          report.durationSeconds = Double(size) / Double(format.byteRate)
        }
        break
      }
      position += 8 + Int(size) + Int(size & 1)
    }
    return report
  }

  /// Checks a whole WAV file: the chunk walk, `fmt ` valid and before `data`, and the `data`
  /// chunk inside the file. Truncated when `data` (or a chunk before it) runs past the end or
  /// the file ends before `fmt ` or `data`; malformed on a bad `fmt ` (channels or rate outside
  /// ``AudioBounds`` included), `data` before `fmt `,
  /// or a non-text chunk id before `data`. Duration = data bytes / byte rate.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard reader.matches(Array("RIFF".utf8), at: 0), reader.matches(Array("WAVE".utf8), at: 8),
      let riffSize = reader.u32le(4)
    else { return .failure(.malformed("no RIFF WAVE header")) }
    var report = ProbeReport(format: .wav)
    report.hasAudioTrack = true
    var format: Format?
    var dataBytes: Int?
    var position = 12
    var steps = 0
    walk: while position < reader.count {
      steps += 1
      guard steps < ProbeLimits.maxSteps else { return .failure(.malformed("WAV has too many chunks")) }
      let remaining = reader.count - position
      guard remaining >= 8, let id = reader.u32be(position), let size = reader.u32le(position + 4),
        ProbeMath.isPrintable(id)
      else {
        guard dataBytes != nil else {
          return .failure(
            remaining < 8
              ? .truncated("WAV ends inside a chunk header")
              : .malformed("WAV has a chunk id that is not text"))
        }
        report.notes.append("\(remaining) bytes after the last WAV chunk")
        break walk
      }
      let end = position + 8 + Int(size)
      switch id {
      case fmt:
        switch formatChunk(reader, at: position, size: Int(size)) {
        case .failure(let problem): return .failure(problem)
        case .success(let parsed):
          format = parsed
          fill(&report, parsed)
        }
      case data:
        guard format != nil else { return .failure(.malformed("WAV data chunk comes before fmt")) }
        switch dataChunk(size: size, riffSize: riffSize, remaining: remaining, into: &report) {
        case .failure(let problem): return .failure(problem)
        case .success(let chunk):
          dataBytes = chunk.bytes
          if chunk.runsToEnd { break walk }
        }
      default:
        guard end <= reader.count else {
          guard dataBytes != nil else { return .failure(.truncated("WAV ends inside a chunk")) }
          report.notes.append("WAV chunk '\(ProbeMath.fourCC(id))' after the data is cut off")
          break walk
        }
      }
      position = min(end + Int(size & 1), reader.count)
    }
    guard let format else { return .failure(.truncated("WAV ends before its fmt chunk")) }
    guard let dataBytes else { return .failure(.truncated("WAV has no data chunk")) }
    // ffmpeg 5.1 decodes no sample from such a file (the stream has no packets at all).
    guard dataBytes > 0 else { return .failure(.noMedia("its WAV data chunk is 0 bytes")) }
    report.durationSeconds = Double(dataBytes) / Double(format.byteRate)
    return .success(report)
  }

  /// The `fmt ` chunk whose header is at `position`, `size` bytes long, read and checked.
  /// - Returns: truncated when it runs past the end; malformed when it is invalid or declares
  ///   channels or a rate outside ``AudioBounds``.
  private static func formatChunk(_ reader: ByteReader, at position: Int, size: Int) -> Result<
    Format, ProbeProblem
  > {
    guard position + 8 + size <= reader.count else {
      return .failure(.truncated("WAV ends inside its fmt chunk"))
    }
    guard let parsed = parseFormat(reader, at: position + 8, size: size) else {
      return .failure(.malformed("WAV fmt chunk is invalid"))
    }
    if let problem = AudioBounds.problem(channels: parsed.channels, sampleRate: Double(parsed.sampleRate)) {
      return .failure(.malformed("WAV fmt chunk declares \(problem)"))
    }
    return .success(parsed)
  }

  /// Reads the size of the `data` chunk whose header has `remaining` bytes from its start to the
  /// end of the file: the audio bytes, and whether the size is a streaming writer's "unknown
  /// length" placeholder (the data then runs to the end of the file, noted in `report`). Fails
  /// truncated when the chunk declares more bytes than the file holds.
  private static func dataChunk(
    size: UInt32, riffSize: UInt32, remaining: Int, into report: inout ProbeReport
  ) -> Result<(bytes: Int, runsToEnd: Bool), ProbeProblem> {
    if size == 0xFFFF_FFFF || (size == 0 && (riffSize == 0 || riffSize == 0xFFFF_FFFF)) {
      report.notes.append("WAV data size is a streaming placeholder: data runs to the end of the file")
      return .success((bytes: remaining - 8, runsToEnd: true))
    }
    guard 8 + Int(size) <= remaining else {
      return .failure(.truncated("WAV data chunk declares \(size) bytes, the file holds \(remaining - 8)"))
    }
    return .success((bytes: Int(size), runsToEnd: false))
  }

  /// Parses and validates a `fmt ` chunk body of `size` bytes at `offset`: at least 16 bytes,
  /// non-zero channels, sample rate, byte rate and block alignment.
  /// For WAVE_FORMAT_EXTENSIBLE the tag is the sub-format's when its GUID is a standard one
  /// of PCM, float, A-law or μ-law, else it stays 65534 (refused as a codec). Nil when invalid.
  static func parseFormat(_ reader: ByteReader, at offset: Int, size: Int) -> Format? {
    guard size >= 16, var tag = reader.u16le(offset), let channels = reader.u16le(offset + 2),
      let rate = reader.u32le(offset + 4), let byteRate = reader.u32le(offset + 8),
      let align = reader.u16le(offset + 12)
    else { return nil }
    guard channels > 0, rate > 0, byteRate > 0, align > 0 else { return nil }
    // FFmpeg reads the extension only when cbSize says it is there (22 bytes at least): a
    // smaller one leaves the extensible tag, which nothing decodes (fuzz seed 38: 22 → 20).
    if tag == extensible, size >= 40, (reader.u16le(offset + 16) ?? 0) >= 22,
      let sub = extensibleSubFormat(reader, at: offset + 24)
    {
      guard validBitsFit(reader.u16le(offset + 18) ?? 0, subFormat: sub) else { return nil }
      tag = sub
    }
    return Format(tag: Int(tag), channels: Int(channels), sampleRate: Int(rate), byteRate: Int(byteRate))
  }

  /// Whether an extensible file's `wValidBitsPerSample` names a sample size a decoder has: FFmpeg
  /// takes it (when not 0) as the bits per sample and picks the PCM decoder of its whole bytes,
  /// so 8216 bits (a flipped bit of 24) leaves "Decoder (codec none) not found". PCM: 1 to 4
  /// bytes; IEEE float: 4 or 8.
  private static func validBitsFit(_ bits: UInt16, subFormat: UInt16) -> Bool {
    guard bits != 0 else { return true }
    let bytes = (Int(bits) + 7) / 8
    return subFormat == 3 ? bytes == 4 || bytes == 8 : subFormat != 1 || (1...4).contains(bytes)
  }

  /// The format tag of WAVE_FORMAT_EXTENSIBLE, whose sub-format GUID names the codec.
  static let extensible: UInt16 = 0xFFFE

  /// The sub-format tags an extensible file may name: PCM, IEEE float, A-law and μ-law, the
  /// ones Core Audio reads from WAVE_FORMAT_EXTENSIBLE and in Apple's table.
  private static let extensibleTags: Set<UInt32> = [1, 3, 6, 7]

  /// The last 12 bytes of every KSDATAFORMAT_SUBTYPE GUID that wraps a format tag
  /// (`xxxxxxxx-0000-0010-8000-00AA00389B71`, as stored: little-endian first fields).
  private static let subFormatBase: [UInt8] = [
    0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71,
  ]

  /// The format tag the 16-byte SubFormat GUID at `offset` wraps, when it is the standard GUID
  /// of PCM, IEEE float, A-law or μ-law; nil otherwise (the file then keeps the extensible tag,
  /// 65534, which no decoder takes: ffmpeg finds no decoder for any other GUID).
  private static func extensibleSubFormat(_ reader: ByteReader, at offset: Int) -> UInt16? {
    guard reader.matches(subFormatBase, at: offset + 4), let tag = reader.u32le(offset),
      extensibleTags.contains(tag)
    else { return nil }
    return UInt16(truncatingIfNeeded: tag)
  }

  /// Copies the format's parameters and codec name into the report.
  private static func fill(_ report: inout ProbeReport, _ format: Format) {
    report.sampleRate = format.sampleRate
    report.channels = format.channels
    let names = [
      1: "pcm", 2: "ms-adpcm", 3: "float", 6: "alaw", 7: "ulaw", 0x11: "ima-adpcm", 0x55: "mp3",
      0xFFFE: "extensible",
    ]
    report.codecs = [names[format.tag] ?? "wav-format-\(format.tag)"]
    // RFC 2361: a WAVE codec is named by its format tag in decimal (`audio/wav; codecs=1`).
    report.streams = [MediaStream(kind: .audio, codec: String(format.tag))]
  }
}
