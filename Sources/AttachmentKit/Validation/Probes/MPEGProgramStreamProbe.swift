/// Structural check of an MPEG-1 system stream / MPEG-2 program stream: pack headers (marker
/// bits of either syntax), system headers and PES packets, each with a start code 00 00 01 and
/// a length that must fit, up to the end code (00 00 01 B9).
///
/// The duration is the spread of the video PES time stamps plus one frame (else the audio
/// stamps' spread, else the pack SCRs'), an approximation. A missing end code is only noted: every
/// packet's length has been checked, which is what catches a cut file.
enum MPEGProgramStreamProbe {
  /// Identifies a program stream from a prefix: a valid pack header at offset 0, then packets
  /// that chain by start code and length, without gaps, for the first 8 packets or up to the
  /// end of the prefix (at least one more start code must be visible). Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard case .header = MPEGSystemFields.pack(reader, at: 0) else { return nil }
    return walk(reader, strict: true).identified
  }

  /// Checks a whole program stream: every packet inside the file (a packet past the end is
  /// truncated), at least one audio or video packet (else truncated). Garbage between packets is skipped to the
  /// next pack header and noted; a stream that is mostly garbage is malformed.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    walk(reader, strict: false).inspected
  }

  /// Packets `identify` checks before it is satisfied.
  private static let identifyPackets = 8

  /// Time stamps seen, per kind of stream.
  private struct Clock {
    var first: UInt64?
    var last: UInt64?
    var low: UInt64 = .max
    var high: UInt64 = 0

    /// Records one time stamp.
    mutating func add(_ value: UInt64) {
      if first == nil { first = value }
      last = value
      low = min(low, value)
      high = max(high, value)
    }

    /// The spread in seconds (90 kHz), nil when under two stamps or zero.
    var seconds: Double? {
      guard first != nil, high > low else { return nil }
      return ProbeMath.seconds(high - low, per: 90_000)
    }
  }

  /// Walks packets from offset 0. `strict` (identify): any deviation is invalid and the bytes
  /// may end anywhere. Otherwise garbage is skipped to the next pack header.
  private static func walk(_ reader: ByteReader, strict: Bool) -> ProbeWalk {
    var walk = PacketWalk(strict: strict)
    packets: while walk.position < reader.count {
      guard walk.packets < ProbeLimits.maxSteps else { return .invalid("MPEG stream has too many packets") }
      if strict && walk.packets >= identifyPackets { break packets }
      switch walk.step(reader) {
      case .next: continue
      case .stop: break packets
      case .end(let ending): return ending
      }
    }
    return walk.finish(reader)
  }

  /// Where one step of the packet walk leaves it.
  private enum Step {
    /// Go on at the walk's new position.
    case next
    /// The stream is over (its end code, or garbage up to the end): finish the walk.
    case stop
    /// The walk ends here, with this result.
    case end(ProbeWalk)
  }

  /// The packet walk's state: the report so far, the clocks, and where it is.
  private struct PacketWalk {
    /// Identify's mode: any deviation is invalid.
    let strict: Bool
    var report = ProbeReport(format: .mpegProgramStream)
    var video = Clock()
    var audio = Clock()
    var system = Clock()
    /// The frame rate of the first video sequence header found.
    var frameRate: Double?
    var videoPackets = 0
    var position = 0
    /// The start codes walked (packs, packets and the end code).
    var packets = 0
    /// The bytes of garbage skipped.
    var skipped = 0
    /// The first non-zero mux rate of a pack header (50 bytes/s units).
    var muxRate: Int?
    var streams = Streams()

    /// The ending when the bytes run out mid-packet.
    func cut(_ detail: String) -> ProbeWalk {
      strict && packets < 2 ? .invalid("MPEG prefix too short") : .cut(report, detail)
    }

    /// Skips garbage from the current position to the next pack header (or the end).
    mutating func skipToNextPack(_ reader: ByteReader) {
      let next = nextPack(reader, after: position) ?? reader.count
      skipped += next - position
      position = next
    }

    /// Walks the start code at the current position: the end code, a pack header or a packet;
    /// anything else is garbage (invalid in strict mode, else skipped).
    mutating func step(_ reader: ByteReader) -> Step {
      guard reader.contains(position, 4) else { return .end(cut("MPEG stream ends inside a start code")) }
      let id = reader.u8(position + 3) ?? 0
      guard reader.matches([0, 0, 1], at: position), id >= 0xB9 else {
        if strict { return .end(.invalid("MPEG stream has no start code at offset \(position)")) }
        skipToNextPack(reader)
        return .next
      }
      packets += 1
      switch id {
      case 0xB9:
        position += 4
        let trailing = reader.count - position
        if trailing > 0 { report.notes.append("\(trailing) bytes after the MPEG end code") }
        return .stop
      case 0xBA:
        return pack(reader)
      default:
        return pesPacket(reader, id: id)
      }
    }

    /// Walks the pack header at the current position: its clock, mux rate and syntax.
    mutating func pack(_ reader: ByteReader) -> Step {
      switch MPEGSystemFields.pack(reader, at: position) {
      case .cut: return .end(cut("MPEG stream ends inside a pack header"))
      case .invalid:
        if strict { return .end(.invalid("MPEG pack header at offset \(position) is invalid")) }
        skipToNextPack(reader)
      case .header(let length, let clock, let isMPEG2, let rate):
        system.add(clock)
        if muxRate == nil, rate > 0 { muxRate = rate }
        streams.isMPEG2 = isMPEG2
        if report.codecs.isEmpty { report.codecs = [isMPEG2 ? "mpeg2-ps" : "mpeg1-system"] }
        position += length
      }
      return .next
    }

    /// Walks the packet with stream `id` at the current position: its length must fit; a
    /// video packet of unbounded length is skipped (invalid in strict mode); its time stamp,
    /// stream and (in the first 64 video packets, until found) sequence header are recorded.
    mutating func pesPacket(_ reader: ByteReader, id: UInt8) -> Step {
      guard let length = reader.u16be(position + 4) else {
        return .end(cut("MPEG stream ends inside a packet header"))
      }
      let end = position + 6 + Int(length)
      guard end <= reader.count else { return .end(cut("MPEG packet at offset \(position) is cut off")) }
      if length == 0, id >= 0xE0, id <= 0xEF {
        if strict { return .end(.invalid("MPEG video packet of unbounded length in a program stream")) }
        skipToNextPack(reader)
        return .next
      }
      packet(reader, id: id, at: position, end: end, into: &report, video: &video, audio: &audio)
      streams.add(reader, id: id, packetAt: position, end: end)
      if (0xE0...0xEF).contains(id) {
        videoPackets += 1
        if frameRate == nil, videoPackets <= 64 {
          frameRate = sequenceRate(reader, from: position + 6, to: end, into: &report, streams: &streams)
        }
      }
      position = end
      return .next
    }

    /// The walk's result once the packets are walked: a strict walk needs two start codes; a
    /// whole stream gets its duration (time stamps, else the mux rate) and needs an audio or
    /// video packet and at most half its bytes skipped.
    func finish(_ reader: ByteReader) -> ProbeWalk {
      if strict && packets < 2 { return .invalid("MPEG prefix too short") }
      var report = report
      if skipped > 0 { report.notes.append("\(skipped) bytes of non-packet data skipped") }
      report.streams = streams.list
      if !strict {
        // Not from a prefix: the spread of the first packets' stamps is not the duration.
        let lastFrame = frameRate.map { 1 / $0 } ?? 0
        report.durationSeconds = video.seconds.map { $0 + lastFrame } ?? audio.seconds ?? system.seconds
        if report.durationSeconds == nil, let muxRate {
          // No time stamps at all: the size over the declared mux rate (50 bytes/s units).
          report.durationSeconds = ProbeMath.seconds(UInt64(reader.count), per: UInt64(muxRate) * 50)
          report.notes.append("MPEG stream has no time stamps: its duration is estimated from its mux rate")
        }
        guard report.hasVideoTrack || report.hasAudioTrack else {
          return .cut(report, "MPEG stream ends before any audio or video packet")
        }
        guard skipped <= reader.count / 2 else { return .invalid("MPEG stream is mostly not packets") }
      }
      return .complete(report)
    }
  }

  /// The elementary streams met, by stream id (and, in private stream 1, sub-stream id), in
  /// order of first packet.
  private struct Streams {
    /// The stream keys in order of first appearance.
    private var order: [Int] = []
    /// Each stream's kind and codec.
    private var found: [Int: MediaStream] = [:]
    /// The video codec a sequence header proved (MPEG-1 unless an extension follows it).
    var videoCodec: String?
    /// Whether the pack headers use the MPEG-2 syntax.
    var isMPEG2 = false

    /// The streams in order, video streams given the codec their sequence header proved.
    var list: [MediaStream] {
      order.compactMap { key in
        guard var stream = found[key] else { return nil }
        if stream.kind == .video, let videoCodec { stream.codec = videoCodec }
        return stream
      }
    }

    /// Records the stream of the PES packet with `id` at `offset` the first time it is met
    /// (at most 64 streams): video 0xE0–0xEF, MPEG audio 0xC0–0xDF (version from its first
    /// frame header), private stream 1 (0xBD) by its DVD sub-stream id: 0x80–0x87 AC-3,
    /// 0x88–0x8F DTS, 0xA0–0xAF LPCM, 0x20–0x3F subpictures.
    mutating func add(_ reader: ByteReader, id: UInt8, packetAt offset: Int, end: Int) {
      let isVideo = (0xE0...0xEF).contains(id)
      let isAudio = (0xC0...0xDF).contains(id)
      guard isVideo || isAudio || id == 0xBD, order.count < 64 else { return }
      let payload = MPEGSystemFields.payloadStart(reader, packetAt: offset, end: end)
      var key = Int(id)
      let stream: MediaStream
      if isVideo {
        stream = MediaStream(
          kind: .video, codec: isMPEG2 ? MPEGVideoStreamProbe.mpeg2Codec : MPEGVideoStreamProbe.mpeg1Codec)
      } else if isAudio {
        stream = MediaStream(kind: .audio, codec: Self.mpegAudioCodec(reader, from: payload, to: end))
      } else {
        guard let payload, let sub = reader.u8(payload) else { return }
        key = 0xBD00 | Int(sub)
        switch sub {
        case 0x80...0x87: stream = MediaStream(kind: .audio, codec: "ac-3")
        case 0x88...0x8F: stream = MediaStream(kind: .audio, codec: "dtsc")
        case 0xA0...0xAF: stream = MediaStream(kind: .audio, codec: "lpcm")
        case 0x20...0x3F: stream = MediaStream(kind: .other, codec: "subp")
        default: stream = MediaStream(kind: .other, codec: "private-stream-1")
        }
      }
      guard found[key] == nil else { return }
      order.append(key)
      found[key] = stream
    }

    /// From the first frame sync in the first 64 bytes of the payload: Layer I or II audio
    /// (`mp1`, `mp2`: see ``CodecTable``), else MPEG-1 audio (object type 0x6B) or MPEG-2
    /// audio (0x69) by the version bits; MPEG-1 when no sync is there.
    private static func mpegAudioCodec(_ reader: ByteReader, from start: Int?, to end: Int) -> String {
      guard let start,
        let sync = reader.firstIndex(of: 0xFF, from: start, to: min(end, start + 64)),
        let next = reader.u8(sync + 1), next & 0xE0 == 0xE0
      else { return "mp4a.6B" }
      switch next & 0x06 {
      case 0x04: return "mp2"
      case 0x06: return "mp1"
      default: return next & 0x18 == 0x18 ? "mp4a.6B" : "mp4a.69"
      }
    }
  }

  /// Records what one PES packet says: the kind of stream and its PTS.
  private static func packet(
    _ reader: ByteReader, id: UInt8, at offset: Int, end: Int, into report: inout ProbeReport,
    video: inout Clock, audio: inout Clock
  ) {
    let isVideo = (0xE0...0xEF).contains(id)
    let isAudio = (0xC0...0xDF).contains(id) || id == 0xBD
    guard isVideo || isAudio else { return }
    let stamp = MPEGSystemFields.presentationTime(reader, packetAt: offset, end: end)
    if isVideo {
      report.hasVideoTrack = true
      if let stamp { video.add(stamp) }
    } else {
      report.hasAudioTrack = true
      if let stamp { audio.add(stamp) }
    }
  }

  /// Looks for a sequence header start code inside a video packet's bytes and, when the whole
  /// header lies inside the packet, takes its picture size and returns its frame rate; nil
  /// when the packet holds none.
  private static func sequenceRate(
    _ reader: ByteReader, from start: Int, to end: Int, into report: inout ProbeReport,
    streams: inout Streams
  ) -> Double? {
    var position = start
    for _ in 0..<64 {
      guard let found = reader.nextStartCode(from: position, to: end) else { return nil }
      if reader.u8(found + 3) == 0xB3, found + 12 <= end,
        case .header(let header) = MPEGVideoStreamProbe.sequenceHeader(reader, at: found)
      {
        report.width = header.width
        report.height = header.height
        // A sequence extension (00 00 01 B5, ID 1) right after the header makes it MPEG-2.
        let next = reader.nextStartCode(from: found + header.length, to: end)
        let mpeg2 = next.map { reader.u8($0 + 3) == 0xB5 && (reader.u8($0 + 4) ?? 0) >> 4 == 1 } ?? false
        streams.videoCodec = mpeg2 ? MPEGVideoStreamProbe.mpeg2Codec : MPEGVideoStreamProbe.mpeg1Codec
        return header.framesPerSecond
      }
      position = found + 3
    }
    return nil
  }

  /// The offset of the next pack start code (00 00 01 BA) after `offset`, or nil.
  private static func nextPack(_ reader: ByteReader, after offset: Int) -> Int? {
    var position = offset + 1
    while let found = reader.nextStartCode(from: position, to: reader.count) {
      if reader.u8(found + 3) == 0xBA { return found }
      position = found + 1
    }
    return nil
  }
}
