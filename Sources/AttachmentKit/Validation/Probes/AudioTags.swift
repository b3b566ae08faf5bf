/// The metadata tags that surround MPEG audio and ADTS frames: ID3v2 before (and sometimes
/// after) the frames, APEv2 and ID3v1 after them.
enum AudioTags {
  /// Length of an ID3v2 tag at `offset`: 10-byte header ("ID3", version 2...4, revision, flags,
  /// 28-bit synchsafe size) plus the 10-byte footer when flag 0x10 is set (v4). 0 when there is
  /// no valid tag header there (the tag itself may run past the readable bytes).
  static func id3v2Length(_ reader: ByteReader, at offset: Int) -> Int {
    guard reader.matches(Array("ID3".utf8), at: offset),
      let version = reader.u8(offset + 3), (2...4).contains(version),
      let revision = reader.u8(offset + 4), revision != 0xFF,
      let flags = reader.u8(offset + 5), let size = reader.bytes(at: offset + 6, count: 4),
      size.allSatisfy({ $0 < 0x80 })
    else { return 0 }
    let body = size.reduce(0) { $0 << 7 | Int($1) }
    return 10 + body + (version == 4 && flags & 0x10 != 0 ? 10 : 0)
  }

  /// The most zero bytes skipped before the first frame (tag padding, or padding some
  /// encoders and editors leave at the start of a file without a tag): 64 KiB, the sniffing
  /// window, so a stream is still identified from its first 64 KiB after its tag.
  static let maximumPadding = 65_536

  /// Where the audio frames start: after any ID3v2 tags at the start (at most 8, each must
  /// end inside the bytes) and up to ``maximumPadding`` zero bytes. Nil when a tag runs past
  /// the readable bytes.
  static func framesStart(_ reader: ByteReader) -> Int? {
    layout(reader)?.frames
  }

  /// Where the tags at the start end and where the frames start (after the zero padding);
  /// nil when a tag runs past the readable bytes.
  static func layout(_ reader: ByteReader) -> (tagsEnd: Int, frames: Int)? {
    var position = 0
    for _ in 0..<8 {
      let length = id3v2Length(reader, at: position)
      guard length > 0 else { break }
      guard let end = ProbeMath.add(position, length), end <= reader.count else { return nil }
      position = end
    }
    // Tag padding written after the tag (or left at the start of the bytes after a tag that
    // a caller skipped itself): at most 64 KiB of zeros.
    let tagsEnd = position
    let limit = position + maximumPadding
    while position < limit, reader.u8(position) == 0 { position += 1 }
    return (tagsEnd, position)
  }

  /// Whether the bytes start with the signature of a container that may hold MPEG audio
  /// (RIFF, Ogg, FLAC, Matroska / WebM, AIFF, MPEG-TS, MPEG-PS, ISO BMFF): such a file is not
  /// an MP3 with junk in front, so no frame is searched for in it.
  static func startsLikeAnotherContainer(_ reader: ByteReader) -> Bool {
    let signatures: [[UInt8]] = [
      Array("RIFF".utf8), Array("OggS".utf8), Array("fLaC".utf8), [0x1A, 0x45, 0xDF, 0xA3],
      Array("FORM".utf8),
      [0, 0, 1, 0xBA],
    ]
    if signatures.contains(where: { reader.matches($0, at: 0) }) { return true }
    if reader.matches(Array("ftyp".utf8), at: 4) { return true }
    return reader.u8(0) == 0x47 && reader.u8(188) == 0x47
  }

  /// The length of a trailing tag at `offset`: ID3v2 (appended), APEv2 with a header
  /// ("APETAGEX" flagged as header: 32 + size; a lone footer: 32), ID3v1 ("TAG", 128 bytes),
  /// or nil when none starts there.
  static func trailingTagLength(_ reader: ByteReader, at offset: Int) -> Int? {
    let id3 = id3v2Length(reader, at: offset)
    if id3 > 0 { return id3 }
    if reader.matches(Array("APETAGEX".utf8), at: offset), let size = reader.u32le(offset + 12),
      let flags = reader.u32le(offset + 20)
    {
      return flags & 0x2000_0000 != 0 ? 32 + Int(size) : 32
    }
    if reader.matches(Array("TAG".utf8), at: offset) { return 128 }
    return nil
  }
}

/// A frame header of a self-synchronising audio stream (MPEG audio, ADTS), as the shared frame
/// walk needs it.
protocol AudioFrameHeader {
  /// Bytes a header occupies (the walk reads at least this many before parsing).
  static var headerSize: Int { get }
  /// Parses the header at `offset`; nil when the bytes there are not a valid header.
  init?(_ reader: ByteReader, at offset: Int)
  /// The whole frame's length in bytes, header included (always >= `headerSize`).
  var length: Int { get }
  /// Sample rate in Hz.
  var sampleRate: Int { get }
  /// Channel count (0 when the stream defines it elsewhere).
  var channels: Int { get }
  /// PCM samples (per channel) the frame decodes to.
  var samples: Int { get }
  /// Whether `other` can be the next frame of the same stream (same version, rate, ...).
  func continues(_ other: Self) -> Bool
}

/// The frame walks shared by the MP3 and ADTS probes.
enum AudioFrameWalk {
  /// Identify: a valid frame at `start` and, at its computed end, a second valid frame of the
  /// same stream, the exact end of the prefix, a header cut by the prefix end (starting 0xFF),
  /// or an ID3v1 tag ending the bytes. Returns the first header.
  static func identify<Header: AudioFrameHeader>(
    _ reader: ByteReader, at start: Int, as _: Header.Type
  ) -> Header? {
    guard let first = Header(reader, at: start) else { return nil }
    let next = start + first.length
    if next == reader.count { return first }
    if reader.contains(next, Header.headerSize) {
      if let second = Header(reader, at: next), first.continues(second) { return first }
      if reader.matches(Array("TAG".utf8), at: next), reader.count - next == 128 { return first }
      return nil
    }
    return next < reader.count && reader.u8(next) == 0xFF ? first : nil
  }

  /// Whether `frames` valid frames of one stream chain from `start` by their lengths; the
  /// chain may also end exactly at the end of the bytes, or at a header cut by it, after two.
  static func chains<Header: AudioFrameHeader>(
    _ reader: ByteReader, at start: Int, frames: Int, as _: Header.Type
  ) -> Bool {
    guard let first = Header(reader, at: start) else { return false }
    var position = start + first.length
    for count in 1..<frames {
      if count >= 2, position == reader.count || !reader.contains(position, Header.headerSize) {
        return position == reader.count || reader.u8(position) == 0xFF
      }
      guard let next = Header(reader, at: position), first.continues(next) else { return false }
      position += next.length
    }
    return true
  }

  /// What a whole-file walk found.
  struct Tally<Header> {
    /// The first frame's header.
    var first: Header
    /// Frames counted.
    var frames: Int
    /// Bytes that were neither frames nor tags (skipped by resynchronising).
    var skipped: Int
    /// Bytes after the last frame that hold no frame (garbage an editor or a cut copy left).
    var trailing = 0
  }

  /// Inspect: frames from `start` chained by length to the end of the file, tags skipped,
  /// garbage resynchronised over (two chained frames, or one reaching the end, confirm a
  /// resync point). Bytes after the last frame from which no frame resynchronises are
  /// trailing bytes: counted in `trailing`, not a failure (decoders stop at the last frame).
  /// Truncated when the last frame or a header starting 0xFF in the last few bytes runs past
  /// the end; malformed when there is no frame or most of the bytes before the trailing ones
  /// are not frames.
  static func inspect<Header: AudioFrameHeader>(
    _ reader: ByteReader, from start: Int, as _: Header.Type, name: String
  ) -> Result<Tally<Header>, ProbeProblem> {
    guard let first = Header(reader, at: start) else {
      return .failure(
        reader.contains(start, Header.headerSize)
          ? .malformed("\(name) has no valid frame at offset \(start)")
          : .truncated("\(name) ends before its first frame header"))
    }
    var tally = Tally(first: first, frames: 0, skipped: 0)
    var position = start
    var steps = 0
    while position < reader.count {
      steps += 1
      guard steps < ProbeLimits.maxSteps * 4 else {
        return .failure(.malformed("\(name) has too many frames"))
      }
      if let header = Header(reader, at: position), first.continues(header) {
        let end = position + header.length
        guard end <= reader.count else {
          return .failure(
            .truncated(
              "\(name) ends inside its last frame (\(reader.count - position) of \(header.length) bytes)"))
        }
        tally.frames += 1
        position = end
        continue
      }
      if !reader.contains(position, Header.headerSize), reader.u8(position) == 0xFF {
        return .failure(.truncated("\(name) ends inside a frame header"))
      }
      if let tag = AudioTags.trailingTagLength(reader, at: position) {
        guard let end = ProbeMath.add(position, tag), end <= reader.count else {
          return .failure(.truncated("\(name) ends inside a trailing tag"))
        }
        position = end
        continue
      }
      guard let next = resync(reader, from: position + 1, before: reader.count, matching: first) else {
        tally.trailing = reader.count - position
        break
      }
      tally.skipped += next - position
      position = next
      guard tally.skipped <= reader.count / 2 else {
        return .failure(.malformed("\(name) is mostly not audio frames"))
      }
    }
    guard tally.frames > 0 else { return .failure(.malformed("\(name) has no complete frame")) }
    guard tally.skipped <= reader.count / 2 else {
      return .failure(.malformed("\(name) is mostly not audio frames"))
    }
    return .success(tally)
  }

  /// The next offset in `start..<limit` where a frame of `first`'s stream begins and is
  /// confirmed by the following frame (or by reaching the end of the file exactly), or nil.
  private static func resync<Header: AudioFrameHeader>(
    _ reader: ByteReader, from start: Int, before limit: Int, matching first: Header
  ) -> Int? {
    var position = start
    while let candidate = reader.firstIndex(of: 0xFF, from: position, to: limit) {
      if let header = Header(reader, at: candidate), first.continues(header) {
        let next = candidate + header.length
        if next == reader.count { return candidate }
        if let second = Header(reader, at: next), first.continues(second) { return candidate }
      }
      position = candidate + 1
    }
    return nil
  }
}
