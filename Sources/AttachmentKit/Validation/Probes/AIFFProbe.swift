/// Structural check of an AIFF or AIFF-C file: "FORM", a big-endian size, "AIFF" or "AIFC", then
/// chunks (4-byte id, big-endian size, data padded to even length), a valid `COMM` chunk and a
/// `SSND` chunk inside the file.
///
/// Apple's attachment table lists AIFF among the audio types, and iOS plays it. The form size is
/// not trusted (the chunks are walked to the end of the file, as for WAV). The duration is
/// `COMM`'s frame count over its sample rate (an 80-bit extended float); for IMA4, whose
/// `COMM` counts packets of 64 frames, the packets times 64. The stream is named by the
/// Core Audio format it decodes as (`lpcm`, `ulaw`, `alaw`, `ima4`, the same names as CAF's), or
/// by its AIFF-C compression type when that is anything else (`GSM `, `MAC3`, …: not decoded,
/// so refused as `unsupported_codec`, and transcoded by a media rescue).
enum AIFFProbe {
  /// The parsed `COMM` chunk.
  struct Common {
    let channels: Int
    /// Sample frames (for IMA4, packets of 64 frames).
    let frames: UInt32
    let sampleRate: Double
    /// AIFF-C's compression type; `NONE` for AIFF.
    let compression: String
  }

  /// Chunk ids read here.
  private static let common = ProbeMath.code("COMM")
  private static let sound = ProbeMath.code("SSND")

  /// AIFF-C compression types iOS decodes, by the Core Audio format name the stream gets: big-
  /// and little-endian integer PCM (`NONE`, `twos`, `sowt`, `in24`, `in32`, `raw `), float PCM
  /// (`fl32`, `fl64`, either case), μ-law, A-law and IMA4.
  private static let codecs: [String: String] = [
    "NONE": "lpcm", "twos": "lpcm", "sowt": "lpcm", "in24": "lpcm", "in32": "lpcm", "raw ": "lpcm",
    "fl32": "lpcm", "FL32": "lpcm", "fl64": "lpcm", "FL64": "lpcm",
    "ulaw": "ulaw", "ULAW": "ulaw", "alaw": "alaw", "ALAW": "alaw", "ima4": "ima4",
  ]

  /// Identifies AIFF from a prefix: "FORM"…"AIFF"/"AIFC", a first chunk header with a text id,
  /// and when `COMM` is in the prefix, valid values. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard let compressed = formType(reader), let firstID = reader.u32be(12), ProbeMath.isPrintable(firstID),
      reader.contains(12, 8)
    else { return nil }
    var report = ProbeReport(format: .aiff)
    report.hasAudioTrack = true
    var position = 12
    for _ in 0..<1_024 {
      guard let id = reader.u32be(position), let size = reader.u32be(position + 4) else { break }
      guard ProbeMath.isPrintable(id) else { return nil }
      if id == common {
        guard reader.contains(position + 8, min(Int(size), compressed ? 22 : 18)) else { break }
        guard let parsed = parseCommon(reader, at: position + 8, size: Int(size), compressed: compressed)
        else { return nil }
        fill(&report, parsed)
        break
      }
      position += 8 + Int(size) + Int(size & 1)
    }
    return report
  }

  /// Checks a whole AIFF file: the chunk walk, a valid `COMM`, and a `SSND` inside the file.
  /// Truncated when a chunk before `SSND`'s data runs past the end or the file ends before
  /// `COMM` or `SSND`; malformed on a bad `COMM` (channels or rate outside ``AudioBounds``
  /// included) or a non-text chunk id; no media when there is
  /// no sample frame.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard let compressed = formType(reader) else {
      return .failure(.malformed("no FORM AIFF or AIFC header"))
    }
    var report = ProbeReport(format: .aiff)
    report.hasAudioTrack = true
    var parsed: Common?
    var soundBytes: Int?
    var position = 12
    var steps = 0
    while position < reader.count {
      steps += 1
      guard steps < ProbeLimits.maxSteps else { return .failure(.malformed("AIFF has too many chunks")) }
      let remaining = reader.count - position
      guard remaining >= 8, let id = reader.u32be(position), let size = reader.u32be(position + 4),
        ProbeMath.isPrintable(id)
      else {
        guard soundBytes != nil, parsed != nil else {
          return .failure(
            remaining < 8
              ? .truncated("AIFF ends inside a chunk header")
              : .malformed("AIFF has a chunk id that is not text"))
        }
        report.notes.append("\(remaining) bytes after the last AIFF chunk")
        break
      }
      let end = position + 8 + Int(size)
      switch id {
      case common:
        guard end <= reader.count else { return .failure(.truncated("AIFF ends inside its COMM chunk")) }
        guard let common = parseCommon(reader, at: position + 8, size: Int(size), compressed: compressed)
        else {
          return .failure(.malformed("AIFF COMM chunk is invalid"))
        }
        if let problem = AudioBounds.problem(channels: common.channels, sampleRate: common.sampleRate) {
          return .failure(.malformed("AIFF COMM chunk declares \(problem)"))
        }
        parsed = common
        fill(&report, common)
      case sound:
        // The offset and block size, then the samples.
        guard size >= 8, end <= reader.count else {
          return .failure(
            .truncated("AIFF SSND chunk declares \(size) bytes, the file holds \(max(0, remaining - 8))"))
        }
        soundBytes = Int(size) - 8
      default:
        guard end <= reader.count else {
          guard soundBytes != nil, parsed != nil else {
            return .failure(.truncated("AIFF ends inside a chunk"))
          }
          report.notes.append("AIFF chunk '\(ProbeMath.fourCC(id))' after the sound data is cut off")
          return finish(report, parsed, soundBytes)
        }
      }
      position = min(end + Int(size & 1), reader.count)
    }
    return finish(report, parsed, soundBytes)
  }

  /// The report once the walk is over: both chunks found, and at least one frame.
  private static func finish(
    _ report: ProbeReport, _ common: Common?, _ soundBytes: Int?
  ) -> Result<ProbeReport, ProbeProblem> {
    guard let common else { return .failure(.truncated("AIFF ends before its COMM chunk")) }
    guard let soundBytes else { return .failure(.truncated("AIFF has no SSND chunk")) }
    guard common.frames > 0, soundBytes > 0 else { return .failure(.noMedia("its AIFF has no sample frame")) }
    var report = report
    let frames = Double(common.frames) * (common.compression == "ima4" ? 64 : 1)
    report.durationSeconds = frames / common.sampleRate
    return .success(report)
  }

  /// Whether the file is AIFF-C (`true`) or AIFF (`false`), or `nil` when it is neither.
  private static func formType(_ reader: ByteReader) -> Bool? {
    guard reader.matches(Array("FORM".utf8), at: 0) else { return nil }
    if reader.matches(Array("AIFF".utf8), at: 8) { return false }
    if reader.matches(Array("AIFC".utf8), at: 8) { return true }
    return nil
  }

  /// Parses and validates a `COMM` chunk body of `size` bytes at `offset`: 18 bytes (22 with
  /// AIFF-C's compression type), channels, a sample size of 1-64 bits and a finite sample rate
  /// of 1 Hz-10 MHz. Nil when invalid.
  static func parseCommon(_ reader: ByteReader, at offset: Int, size: Int, compressed: Bool) -> Common? {
    guard size >= (compressed ? 22 : 18), let channels = reader.u16be(offset),
      let frames = reader.u32be(offset + 2), let sampleSize = reader.u16be(offset + 6),
      let exponent = reader.u16be(offset + 8), let mantissa = reader.u64be(offset + 10)
    else { return nil }
    let rate = extended(exponent: exponent, mantissa: mantissa)
    guard channels > 0, (1...64).contains(sampleSize), rate.isFinite, rate >= 1, rate <= 10_000_000 else {
      return nil
    }
    var compression = "NONE"
    if compressed {
      guard let type = reader.u32be(offset + 18) else { return nil }
      compression = ProbeMath.fourCC(type)
    }
    return Common(
      channels: Int(channels), frames: frames, sampleRate: rate,
      compression: compression)
  }

  /// An IEEE 754 80-bit extended float (sign and 15-bit exponent, then a 64-bit mantissa with
  /// its integer bit): AIFF's sample rate.
  static func extended(exponent signAndExponent: UInt16, mantissa: UInt64) -> Double {
    let exponent = Int(signAndExponent & 0x7FFF)
    guard exponent != 0x7FFF else { return .nan }
    guard mantissa != 0 else { return 0 }
    let magnitude = Double(sign: .plus, exponent: exponent - 16_383 - 63, significand: Double(mantissa))
    return signAndExponent & 0x8000 != 0 ? -magnitude : magnitude
  }

  /// Copies the chunk's parameters and codec name into the report.
  private static func fill(_ report: inout ProbeReport, _ common: Common) {
    report.sampleRate = Int(common.sampleRate.rounded())
    report.channels = common.channels
    let codec = codecs[common.compression] ?? ProbeMath.trimmed(common.compression)
    report.codecs = [codec]
    report.streams = [MediaStream(kind: .audio, codec: codec)]
  }
}
