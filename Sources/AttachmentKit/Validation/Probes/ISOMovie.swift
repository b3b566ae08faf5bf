/// What one track of an ISO BMFF movie says about itself (tkhd, mdhd, hdlr, stsd, stco).
struct ISOTrack {
  /// tkhd track_ID.
  var id: UInt32 = 0
  /// The mdia hdlr handler type ('vide', 'soun', ...), 0 when absent.
  var handler: UInt32 = 0
  /// tkhd width and height (the integer part of 16.16 fixed point).
  var width = 0
  /// See `width`.
  var height = 0
  /// The first sample entry's type ('avc1', 'mp4a', ...), when there is one.
  var codec: UInt32?
  /// Every sample entry's codec as an RFC 6381 string (see `ISOSampleEntry`).
  var entryCodecs: [String] = []
  /// The indices (into `entryCodecs`) of audio sample entries that give neither a channel
  /// count nor a sample rate, in their fields or their configuration box: nothing can decode
  /// them (see ``ISOSampleEntry/describesAudio(_:_:)``).
  var undescribedEntries: Set<Int> = []
  /// Visual sample entry width / height, a fallback when tkhd says 0.
  var entryWidth = 0
  /// See `entryWidth`.
  var entryHeight = 0
  /// Audio sample entry channel count and sample rate (version 0/1 entries only).
  var channels = 0
  /// See `channels`.
  var sampleRate = 0
  /// mdhd timescale and duration.
  var timescale: UInt64 = 0
  /// See `timescale`.
  var duration: UInt64 = 0
  /// tkhd duration, in the movie's (mvhd) timescale; 0 when unknown.
  var headerDuration: UInt64 = 0
  /// The largest stco/co64 chunk offset, when the track has any.
  var maxChunkOffset: UInt64?
  /// The first stco/co64 chunk offset that lies outside every mdat payload (in a box header,
  /// the moov, ...), when the parse was given the file's media data; nil when all lie inside.
  var strayChunkOffset: UInt64?
  /// The bytes stsz says the track's samples take together (0 without stsz).
  var sampleBytes: UInt64 = 0
  /// The NAL length size of an H.264 or HEVC first sample entry (from avcC / hvcC), for the
  /// walk over its samples' NAL units (``ISONALUnits``).
  var nalLengthSize: Int?
}

/// What the moov box says: mvhd timing, the tracks, and mvex (fragmented movies).
struct ISOMovie {
  /// mvhd timescale (units per second).
  var timescale: UInt64 = 0
  /// mvhd duration in `timescale` units, nil when unknown (all ones).
  var duration: UInt64?
  /// mvex present: the movie continues in moof fragments.
  var hasMovieExtends = false
  /// mehd fragment_duration in `timescale` units.
  var fragmentDuration: UInt64?
  /// trex default_sample_duration by track ID.
  var defaultSampleDurations: [UInt32: UInt32] = [:]
  /// The tracks in order.
  var tracks: [ISOTrack] = []

  /// The video and sound handler types.
  static let vide = ProbeMath.code("vide")
  static let soun = ProbeMath.code("soun")

  /// The first video track, else the first track.
  var mainTrack: ISOTrack? {
    tracks.first { $0.handler == Self.vide } ?? tracks.first
  }
}

/// Parses a moov box into an `ISOMovie`, reading only box headers and the few fields it needs.
enum ISOMovieParser {
  /// Box types read here.
  private static let mvhd = ProbeMath.code("mvhd")
  private static let trak = ProbeMath.code("trak")
  private static let mvex = ProbeMath.code("mvex")
  private static let mehd = ProbeMath.code("mehd")
  private static let trex = ProbeMath.code("trex")
  private static let tkhd = ProbeMath.code("tkhd")
  private static let mdia = ProbeMath.code("mdia")
  private static let mdhd = ProbeMath.code("mdhd")
  private static let hdlr = ProbeMath.code("hdlr")
  private static let minf = ProbeMath.code("minf")
  private static let stbl = ProbeMath.code("stbl")
  private static let dinf = ProbeMath.code("dinf")
  private static let dref = ProbeMath.code("dref")
  static let stsd = ProbeMath.code("stsd")
  static let stco = ProbeMath.code("stco")
  static let co64 = ProbeMath.code("co64")
  static let stsz = ProbeMath.code("stsz")

  /// Parses `moov` (which must lie inside the readable bytes). Fails malformed when mvhd is
  /// missing or a box is too small for its fields or runs past its parent. With `mediaData`
  /// (the whole file's mdat payloads), each track's chunk offsets are checked against it (see
  /// ``ISOTrack/strayChunkOffset``).
  static func parse(_ reader: ByteReader, moov: ISOBox, mediaData: ISOMediaData? = nil)
    -> Result<ISOMovie, ProbeProblem>
  {
    var movie = ISOMovie()
    var sawHeader = false
    do {
      for box in try ISOBox.children(reader, of: moov).get() {
        switch box.type {
        case mvhd:
          try movieHeader(reader, box, into: &movie)
          sawHeader = true
        case trak where movie.tracks.count < ProbeLimits.maxTracks:
          movie.tracks.append(try track(reader, box, mediaData: mediaData))
        case mvex:
          movie.hasMovieExtends = true
          try movieExtends(reader, box, into: &movie)
        default:
          break
        }
      }
    } catch {
      return .failure(error)
    }
    guard sawHeader else { return .failure(.malformed("moov has no mvhd box")) }
    return .success(movie)
  }

  /// Fails unless `box`'s payload holds at least `size` bytes.
  static func need(_ box: ISOBox, _ size: Int) throws(ProbeProblem) {
    guard box.payloadSize >= size else {
      throw .malformed("box '\(box.typeName)' is too small (\(box.payloadSize) bytes)")
    }
  }

  /// A field the caller has made sure lies inside its box; throws if it still cannot be read.
  static func field<T>(_ value: T?, _ box: ISOBox) throws(ProbeProblem) -> T {
    guard let value else { throw .truncated("box '\(box.typeName)' is cut off") }
    return value
  }

  /// Reads (timescale, duration) from an mvhd or mdhd full box (version 0 or 1); duration is nil when
  /// all ones (unknown).
  private static func timing(_ reader: ByteReader, _ box: ISOBox) throws(ProbeProblem)
    -> (UInt64, UInt64?)
  {
    try need(box, 4)
    let version = try field(reader.u8(box.payload), box)
    if version == 1 {
      try need(box, 32)
      let scale = try field(reader.u32be(box.payload + 20), box)
      let length = try field(reader.u64be(box.payload + 24), box)
      return (UInt64(scale), length == UInt64.max ? nil : length)
    }
    try need(box, 20)
    let scale = try field(reader.u32be(box.payload + 12), box)
    let length = try field(reader.u32be(box.payload + 16), box)
    return (UInt64(scale), length == UInt32.max ? nil : UInt64(length))
  }

  /// mvhd: movie timescale and duration.
  private static func movieHeader(_ reader: ByteReader, _ box: ISOBox, into movie: inout ISOMovie)
    throws(ProbeProblem)
  {
    let (scale, length) = try timing(reader, box)
    movie.timescale = scale
    movie.duration = length
  }

  /// mvex: mehd fragment duration and trex default sample durations.
  private static func movieExtends(_ reader: ByteReader, _ box: ISOBox, into movie: inout ISOMovie)
    throws(ProbeProblem)
  {
    for child in try ISOBox.children(reader, of: box).get() {
      if child.type == mehd {
        try need(child, 8)
        if try field(reader.u8(child.payload), child) == 1 {
          try need(child, 12)
          movie.fragmentDuration = try field(reader.u64be(child.payload + 4), child)
        } else {
          movie.fragmentDuration = UInt64(try field(reader.u32be(child.payload + 4), child))
        }
      } else if child.type == trex {
        try need(child, 24)
        let id = try field(reader.u32be(child.payload + 4), child)
        movie.defaultSampleDurations[id] = try field(reader.u32be(child.payload + 12), child)
      }
    }
  }

  /// trak: tkhd, then mdia (mdhd, hdlr, minf/stbl).
  private static func track(_ reader: ByteReader, _ box: ISOBox, mediaData: ISOMediaData?)
    throws(ProbeProblem) -> ISOTrack
  {
    var result = ISOTrack()
    for child in try ISOBox.children(reader, of: box).get() {
      if child.type == tkhd {
        try trackHeader(reader, child, into: &result)
      } else if child.type == mdia {
        try media(reader, child, into: &result, mediaData: mediaData)
      }
    }
    return result
  }

  /// tkhd: track ID, duration (movie timescale) and the 16.16 width and height.
  private static func trackHeader(_ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack)
    throws(ProbeProblem)
  {
    try need(box, 4)
    let version = try field(reader.u8(box.payload), box)
    let (idAt, sizeAt) = version == 1 ? (20, 88) : (12, 76)
    try need(box, sizeAt + 8)
    track.id = try field(reader.u32be(box.payload + idAt), box)
    if version == 1 {
      let length = try field(reader.u64be(box.payload + 28), box)
      track.headerDuration = length == UInt64.max ? 0 : length
    } else {
      let length = try field(reader.u32be(box.payload + 20), box)
      track.headerDuration = length == UInt32.max ? 0 : UInt64(length)
    }
    track.width = Int(try field(reader.u32be(box.payload + sizeAt), box) >> 16)
    track.height = Int(try field(reader.u32be(box.payload + sizeAt + 4), box) >> 16)
  }

  /// mdia: mdhd timing, hdlr handler type, and minf/stbl.
  private static func media(
    _ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack, mediaData: ISOMediaData?
  ) throws(ProbeProblem) {
    for child in try ISOBox.children(reader, of: box).get() {
      switch child.type {
      case mdhd:
        let (scale, length) = try timing(reader, child)
        track.timescale = scale
        track.duration = length ?? 0
      case hdlr:
        try need(child, 12)
        track.handler = try field(reader.u32be(child.payload + 8), child)
      case minf:
        for inner in try ISOBox.children(reader, of: child).get() {
          if inner.type == stbl {
            try sampleTable(reader, inner, into: &track, mediaData: mediaData)
          } else if inner.type == dinf {
            try dataInformation(reader, inner)
          }
        }
      default:
        break
      }
    }
  }

  /// dinf: its dref, whose entry count ffmpeg bounds by the box (at least one, at most one per
  /// 12 bytes after the count, rounded up) and whose entries are each 12 bytes at least; it
  /// refuses the header otherwise ("error reading header … Invalid data found").
  private static func dataInformation(_ reader: ByteReader, _ box: ISOBox) throws(ProbeProblem) {
    for dref in try ISOBox.children(reader, of: box).get() where dref.type == Self.dref {
      try need(dref, 8)
      let entries = Int(try field(reader.u32be(dref.payload + 4), dref))
      guard entries > 0, entries <= (dref.payloadSize - 1) / 12 + 1 else {
        throw .malformed("dref declares \(entries) data references in \(dref.payloadSize) bytes")
      }
      var position = dref.payload + 8
      for _ in 0..<entries {
        guard let size = reader.u32be(position), size >= 12, position + Int(size) <= dref.end else {
          throw .malformed("dref has a data reference smaller than 12 bytes or past its end")
        }
        position += Int(size)
      }
    }
  }

  /// stsd: the first entry's type, and its visual size or audio format; every entry's codec.
  static func sampleDescription(
    _ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack
  ) throws(ProbeProblem) {
    try need(box, 8)
    // ffmpeg refuses the header for a count of 0, over 1,024, or over a count of 8-byte entries
    // the box could hold ("invalid STSD entries").
    let declared = Int(try field(reader.u32be(box.payload + 4), box))
    guard declared > 0, declared <= min(1_024, box.payloadSize / 8) else {
      throw .malformed("stsd declares \(declared) sample entries in \(box.payloadSize) bytes")
    }
    guard let entries = try? ISOBox.children(reader, of: box, skipping: 8).get(),
      let entry = entries.first
    else { throw .malformed("stsd has no readable sample entry") }
    guard entries.count >= declared else {
      throw .malformed("stsd declares \(declared) sample entries and holds \(entries.count)")
    }
    track.codec = entry.type
    track.entryCodecs = entries.map { ISOSampleEntry.codec(reader, $0, handler: track.handler) }
    if track.handler == ISOMovie.soun {
      track.undescribedEntries = Set(
        entries.indices.filter { !ISOSampleEntry.describesAudio(reader, entries[$0]) })
    }
    if track.handler == ISOMovie.vide {
      if let problem = ISOSampleEntry.configurationProblem(reader, entry, handler: track.handler) {
        throw .malformed(problem)
      }
      track.nalLengthSize = ISOSampleEntry.nalLengthSize(reader, entry, handler: track.handler)
    }
    if track.handler == ISOMovie.vide, entry.payloadSize >= 28 {
      track.entryWidth = Int(try field(reader.u16be(entry.payload + 24), entry))
      track.entryHeight = Int(try field(reader.u16be(entry.payload + 26), entry))
    }
    if track.handler == ISOMovie.soun, entry.payloadSize >= 28,
      try field(reader.u16be(entry.payload + 8), entry) < 2
    {
      track.channels = Int(try field(reader.u16be(entry.payload + 16), entry))
      track.sampleRate = Int(try field(reader.u32be(entry.payload + 24), entry) >> 16)
    }
  }
}
