/// Structural check of an MPEG-1 / MPEG-2 video elementary stream (ISO 11172-2 / 13818-2):
/// the sequence header (00 00 01 B3: 12-bit width and height, aspect ratio, frame rate, marker
/// bit, optional quantiser matrices) and, on the whole file, the pictures. The syntax ends a
/// stream with a sequence end code (00 00 01 B7), but encoders (ffmpeg among them) leave it
/// out, so its absence is only noted: an elementary stream has no lengths that would show a
/// cut, and a truncated one cannot be told from a complete one.
enum MPEGVideoStreamProbe {
  /// MPEG-1 video as a codecs string: its MPEG-4 object type indication 0x6A (ISO/IEC 14496-1).
  static let mpeg1Codec = "mp4v.6A"
  /// MPEG-2 video as a codecs string: object type 0x61 (MPEG-2 Main profile, the usual one).
  static let mpeg2Codec = "mp4v.61"

  /// A parsed sequence header.
  struct SequenceHeader {
    /// horizontal_size_value (12 bits).
    let width: Int
    /// vertical_size_value (12 bits).
    let height: Int
    /// The frame rate its frame_rate_code (1...8) stands for.
    let framesPerSecond: Double
    /// Bytes from the start code to the end of the header (12, 76 or 140).
    let length: Int
  }

  /// Frames per second by frame_rate_code (index 0 is forbidden).
  private static let frameRates: [Double] = [
    0, 24_000.0 / 1_001, 24, 25, 30_000.0 / 1_001, 30, 50, 60_000.0 / 1_001, 60,
  ]

  /// The result of reading a sequence header.
  enum SequenceHeaderRead {
    /// A valid header.
    case header(SequenceHeader)
    /// The bytes end inside it.
    case cut
    /// A field is out of range (zero size, forbidden aspect or frame rate, marker bit clear).
    case invalid(String)
  }

  /// Reads the sequence header whose start code (00 00 01 B3) is at `offset`.
  static func sequenceHeader(_ reader: ByteReader, at offset: Int) -> SequenceHeaderRead {
    guard reader.matches([0, 0, 1, 0xB3], at: offset) else { return .invalid("no sequence header") }
    guard let bytes = reader.bytes(at: offset, count: 12) else { return .cut }
    let width = Int(bytes[4]) << 4 | Int(bytes[5] >> 4)
    let height = Int(bytes[5] & 0x0F) << 8 | Int(bytes[6])
    let aspect = Int(bytes[7] >> 4)
    let rate = Int(bytes[7] & 0x0F)
    guard width > 0, height > 0 else { return .invalid("MPEG sequence header has a zero size") }
    guard (1...14).contains(aspect), (1...8).contains(rate), rate < frameRates.count else {
      return .invalid("MPEG sequence header has a forbidden aspect ratio or frame rate code")
    }
    guard bytes[10] & 0x20 != 0 else { return .invalid("MPEG sequence header marker bit is 0") }
    var length = 12
    let loadsIntra = bytes[11] & 0x02 != 0
    var loadsNonIntra = bytes[11] & 0x01 != 0
    if loadsIntra {
      guard let last = reader.u8(offset + 75) else { return .cut }
      loadsNonIntra = last & 0x01 != 0
      length += 64
    }
    if loadsNonIntra { length += 64 }
    guard reader.contains(offset, length) else { return .cut }
    return .header(
      SequenceHeader(
        width: width, height: height, framesPerSecond: frameRates[rate], length: length))
  }

  /// Identifies a video elementary stream from a prefix: a valid sequence header at offset 0,
  /// then (after optional zero stuffing, when inside the prefix) the start code of an
  /// extension, user data, GOP or picture. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard case .header(let header) = sequenceHeader(reader, at: 0) else { return nil }
    var report = ProbeReport(format: .mpegVideoStream)
    report.width = header.width
    report.height = header.height
    report.hasVideoTrack = true
    var position = header.length
    while reader.u8(position) == 0, reader.u8(position + 1) == 0, reader.u8(position + 2) == 0 {
      position += 1
    }
    guard reader.contains(position, 4) else { return report }
    guard reader.matches([0, 0, 1], at: position), let code = reader.u8(position + 3),
      [0x00, 0xB2, 0xB5, 0xB8].contains(code)
    else { return nil }
    report.codecs = [code == 0xB5 ? "mpeg2video" : "mpeg1video"]
    report.streams = [MediaStream(kind: .video, codec: code == 0xB5 ? mpeg2Codec : mpeg1Codec)]
    return report
  }

  /// Checks a whole video elementary stream: a sequence header first and at least one picture
  /// (else truncated); a missing sequence end code is noted. The duration is the pictures
  /// counted (field pictures as halves) over the frame rate.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    let header: SequenceHeader
    switch sequenceHeader(reader, at: 0) {
    case .header(let found): header = found
    case .cut: return .failure(.truncated("MPEG video stream ends inside its sequence header"))
    case .invalid(let detail): return .failure(.malformed(detail))
    }
    var report = ProbeReport(format: .mpegVideoStream)
    report.width = header.width
    report.height = header.height
    report.hasVideoTrack = true
    report.codecs = ["mpeg1video"]
    var halves = 0
    var lastCode: UInt8 = 0xB3
    var lastAt = 0
    var position = header.length
    var steps = 0
    while let found = reader.nextStartCode(from: position, to: reader.count),
      let code = reader.u8(found + 3)
    {
      steps += 1
      guard steps < ProbeLimits.maxSteps else {
        return .failure(.malformed("MPEG video stream has too many start codes"))
      }
      switch code {
      case 0x00:
        halves += 2
      case 0xB5:
        if let byte = reader.u8(found + 4), byte >> 4 == 1 { report.codecs = ["mpeg2video"] }
        if let byte = reader.u8(found + 4), byte >> 4 == 8, let structure = reader.u8(found + 6),
          structure & 0x03 != 0x03, halves > 0
        {
          halves -= 1
        }
      default:
        break
      }
      lastCode = code
      lastAt = found
      position = found + 4
    }
    guard halves > 0 else { return .failure(.truncated("MPEG video stream has no picture")) }
    if lastCode == 0xB7 {
      let trailing = reader.count - (lastAt + 4)
      if trailing > 0 { report.notes.append("\(trailing) bytes after the sequence end code") }
    } else {
      report.notes.append("MPEG video stream has no sequence end code: completeness cannot be checked")
    }
    report.durationSeconds = Double(halves) / 2 / header.framesPerSecond
    report.streams = [
      MediaStream(kind: .video, codec: report.codecs == ["mpeg2video"] ? mpeg2Codec : mpeg1Codec)
    ]
    return .success(report)
  }
}
