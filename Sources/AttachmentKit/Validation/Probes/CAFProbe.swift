/// Structural check of a Core Audio Format file: "caff", version 1, then chunks (4-byte type,
/// signed 64-bit big-endian size), the first being a 32-byte 'desc'; a 'data' chunk (whose size
/// may be -1 only because it runs to the end of the file, so it is then the last chunk), and a
/// 'pakt' packet table when packets are of variable size, whose sizes add up to the data
/// (``CAFPacketTable``).
enum CAFProbe {
  /// The parsed 'desc' chunk (the audio stream description).
  struct Description {
    let sampleRate: Double
    let formatID: UInt32
    let bytesPerPacket: Int
    let framesPerPacket: Int
    let channels: Int
  }

  /// Chunk types read here.
  private static let desc = ProbeMath.code("desc")
  private static let data = ProbeMath.code("data")
  private static let pakt = ProbeMath.code("pakt")

  /// Identifies CAF from a prefix: "caff", version 1, and a valid 32-byte 'desc' first chunk
  /// (the 52 bytes must be in the prefix). Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard let description = header(reader) else { return nil }
    var report = ProbeReport(format: .caf)
    fill(&report, description)
    return report
  }

  /// Checks a whole CAF file: the header and 'desc', every chunk inside the file, a 'data'
  /// chunk of at least 4 bytes (its edit count), 'pakt' when packets vary. Truncated when a
  /// chunk runs past the end, a header is cut, or the file ends before 'data'; malformed on a
  /// bad header, channels or a sample rate outside ``AudioBounds``, a negative size other than
  /// data's -1, or variable packets without 'pakt'.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard let description = header(reader) else {
      return .failure(
        reader.count < 52 && reader.matches(Array("caff".utf8), at: 0)
          ? .truncated("CAF ends inside its header") : .malformed("no valid CAF header and desc chunk"))
    }
    if let problem = AudioBounds.problem(channels: description.channels, sampleRate: description.sampleRate) {
      return .failure(.malformed("CAF desc chunk declares \(problem)"))
    }
    var report = ProbeReport(format: .caf)
    fill(&report, description)
    var dataBytes: Int?
    var packetTable: (payload: Int, length: Int)?
    var position = 8
    var steps = 0
    while position < reader.count {
      steps += 1
      guard steps < ProbeLimits.maxSteps else { return .failure(.malformed("CAF has too many chunks")) }
      guard let type = reader.u32be(position), let rawSize = reader.u64be(position + 4) else {
        return .failure(.truncated("CAF ends inside a chunk header"))
      }
      let size = Int64(bitPattern: rawSize)
      let payload = position + 12
      if type == data && size == -1 {
        guard reader.count - payload >= 4 else { return .failure(.truncated("CAF data chunk is cut off")) }
        dataBytes = reader.count - payload - 4
        break
      }
      guard size >= 0, let length = Int(exactly: size), let end = ProbeMath.add(payload, length) else {
        return .failure(.malformed("CAF chunk '\(ProbeMath.fourCC(type))' has size \(size)"))
      }
      guard end <= reader.count else {
        return .failure(.truncated("CAF chunk '\(ProbeMath.fourCC(type))' runs past the end of the file"))
      }
      if type == data {
        guard length >= 4 else { return .failure(.malformed("CAF data chunk has no edit count")) }
        dataBytes = length - 4
      }
      if type == pakt { packetTable = (payload, length) }
      position = end
    }
    guard let dataBytes else { return .failure(.truncated("CAF ends before its data chunk")) }
    if let problem = CAFPacketTable.problem(
      reader, packetTable, dataBytes: dataBytes, description: description)
    {
      return .failure(.malformed(problem))
    }
    let validFrames = packetTable.flatMap { $0.length >= 24 ? reader.u64be($0.payload + 8) : nil }
    if description.bytesPerPacket > 0, description.framesPerPacket > 0 {
      let frames = Double(dataBytes / description.bytesPerPacket) * Double(description.framesPerPacket)
      report.durationSeconds = frames / description.sampleRate
    } else if let validFrames, Int64(bitPattern: validFrames) >= 0 {
      report.durationSeconds = Double(validFrames) / description.sampleRate
    } else {
      return .failure(.malformed("CAF with variable-size packets has no pakt chunk"))
    }
    return .success(report)
  }

  /// Reads and validates the file header and the 'desc' chunk: version 1, desc first with
  /// size 32, a finite positive sample rate up to 10 MHz, a text format ID, and channels.
  private static func header(_ reader: ByteReader) -> Description? {
    guard reader.matches(Array("caff".utf8), at: 0), reader.u16be(4) == 1,
      reader.u32be(8) == desc, reader.u64be(12) == 32,
      let rateBits = reader.u64be(20), let formatID = reader.u32be(28),
      let bytesPerPacket = reader.u32be(36), let framesPerPacket = reader.u32be(40),
      let channels = reader.u32be(44), reader.contains(0, 52)
    else { return nil }
    let rate = Double(bitPattern: rateBits)
    guard rate.isFinite, rate > 0, rate <= 10_000_000, ProbeMath.isPrintable(formatID), channels > 0
    else { return nil }
    return Description(
      sampleRate: rate, formatID: formatID, bytesPerPacket: Int(bytesPerPacket),
      framesPerPacket: Int(framesPerPacket), channels: Int(channels))
  }

  /// Copies the description into the report.
  private static func fill(_ report: inout ProbeReport, _ description: Description) {
    report.hasAudioTrack = true
    report.sampleRate = Int(description.sampleRate.rounded())
    report.channels = description.channels
    report.codecs = [ProbeMath.fourCC(description.formatID)]
    report.streams = [MediaStream(kind: .audio, codec: codec(description.formatID))]
  }

  /// Core Audio format IDs whose RFC 6381 name differs from the ID (`CoreAudioBaseTypes.h`).
  private static let codecNames: [String: String] = [
    "aac ": "mp4a.40.2", "aach": "mp4a.40.5", "aacp": "mp4a.40.29", "aacl": "mp4a.40.23",
    "aace": "mp4a.40.39", ".mp3": "mp3", ".mp2": "mp2", ".mp1": "mp1",
  ]

  /// The codecs string of a 'desc' format ID: its RFC 6381 name, else the ID without
  /// trailing spaces.
  private static func codec(_ formatID: UInt32) -> String {
    let code = ProbeMath.fourCC(formatID)
    return codecNames[code] ?? ProbeMath.trimmed(code)
  }
}
