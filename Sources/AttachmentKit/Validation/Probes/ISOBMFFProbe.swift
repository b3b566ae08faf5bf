/// Structural check of the MP4 family and QuickTime (ISO/IEC 14496-12): the top-level box walk,
/// ftyp brands, and the moov box (mvhd duration, tracks, handlers, sizes, fragments).
///
/// HEIF / AVIF images (ftyp major brand heic, mif1, avif, ...) are ISO BMFF too, but not an
/// accepted format: both steps refuse them.
enum ISOBMFFProbe {
  /// Box types and brands read here.
  private static let ftyp = ProbeMath.code("ftyp")
  private static let moov = ProbeMath.code("moov")
  private static let moof = ProbeMath.code("moof")
  private static let mdat = ProbeMath.code("mdat")
  private static let quickTimeBrand = ProbeMath.code("qt  ")

  /// Boxes a QuickTime movie without ftyp may start with.
  private static let quickTimeFirstBoxes: Set<UInt32> = codes([
    "moov", "wide", "free", "skip", "mdat", "pnot", "uuid",
  ])

  /// Top-level boxes a movie file has before its moov; a file of only these and no moov is
  /// taken as cut off (or unfinished), not as something else.
  private static let movieFileBoxes: Set<UInt32> = codes([
    "ftyp", "wide", "free", "skip", "mdat", "pnot", "uuid", "junk", "PICT",
  ])

  /// Major brands of still-image files (HEIF, AVIF, Canon CR3), which are not movies.
  private static let imageBrands: Set<UInt32> = codes([
    "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "mif2", "msf1", "avif", "avis", "avio", "crx ",
  ])

  /// The four-character codes of `texts`.
  private static func codes(_ texts: [StaticString]) -> Set<UInt32> {
    Set(texts.map { ProbeMath.code($0) })
  }

  /// Identifies ISO BMFF from a prefix: an ftyp first box (in the prefix, printable major
  /// brand not a still-image brand), or a QuickTime first box followed by another plausible
  /// box (or, alone in the prefix, an mdat, or a moov whose first child is plausible). Later
  /// boxes in the prefix must have printable types and valid sizes; a moov wholly inside the
  /// prefix fills in tracks and duration. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard case .box(let first) = ISOBox.header(reader, at: 0, limit: reader.count),
      ProbeMath.isPrintable(first.type)
    else { return nil }
    var report = ProbeReport(format: .isoBMFF)
    if first.type == ftyp {
      guard first.end <= reader.count, !first.extendsToEnd, first.payloadSize <= 4_096,
        brands(reader, first, into: &report) == nil
      else { return nil }
    } else {
      guard quickTimeFirstBoxes.contains(first.type) else { return nil }
      report.isQuickTime = true
      if first.end >= reader.count || first.extendsToEnd {
        guard first.type == mdat || (first.type == moov && plausibleChild(reader, first)) else {
          return nil
        }
        return report
      }
    }
    var position = first.end
    var boxes = 1
    var movie: ISOMovie?
    if first.type == moov { movie = try? ISOMovieParser.parse(reader, moov: first).get() }
    walk: while position < reader.count, boxes < ProbeLimits.maxSteps {
      let box: ISOBox
      switch ISOBox.header(reader, at: position, limit: reader.count) {
      case .cut: break walk
      case .invalid: return nil
      case .box(let found): box = found
      }
      guard ProbeMath.isPrintable(box.type) else { return nil }
      boxes += 1
      let inPrefix = box.end <= reader.count && !box.extendsToEnd
      if box.type == moov, inPrefix, movie == nil {
        movie = try? ISOMovieParser.parse(reader, moov: box).get()
      }
      if box.type == moof { report.isFragmented = true }
      guard inPrefix else { break }
      position = box.end
    }
    guard report.majorBrand != nil || boxes >= 2 else { return nil }
    // Fragment durations are not summed from a prefix: they would be a partial sum.
    if let movie { fill(&report, from: movie, fragments: ISOFragmentTally()) }
    return report
  }

  /// Checks a whole ISO BMFF file: the top-level boxes tile the file exactly (a box reaching
  /// past the end, or a cut header, is truncated), the first box is ftyp or a QuickTime atom,
  /// there is exactly one moov with an mvhd, and no chunk offset points past the end. A file
  /// without moov is truncated when all its boxes are ones a movie has before moov (ftyp,
  /// free, mdat, ...: the index was cut off or never written), else malformed. A fragmented
  /// movie (mvex) without any moof and without samples of its own, or ending with a moof (its
  /// mdat missing), is truncated too; one cut exactly between two fragments cannot be told
  /// from a complete one.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    var boxes: TopLevelBoxes
    switch walkTopLevel(reader) {
    case .failure(let problem): return .failure(problem)
    case .success(let walked): boxes = walked
    }
    guard boxes.lastType != moof else {
      return .failure(.truncated("ISO BMFF ends with a moof whose mdat is missing"))
    }
    guard let movieBox = boxes.movieBox else {
      return .failure(
        boxes.sawOtherBoxes
          ? .malformed("ISO BMFF has no moov box")
          : .truncated("ISO BMFF has no moov box (cut off before it, or never finalised)"))
    }
    let movie: ISOMovie
    switch ISOMovieParser.parse(reader, moov: movieBox, mediaData: boxes.mediaData) {
    case .failure(let problem): return .failure(problem)
    case .success(let parsed): movie = parsed
    }
    if let problem = missingMedia(movie, fragments: boxes.tally, fileSize: reader.count)
      ?? misplacedMedia(movie, mediaData: boxes.mediaData)
    {
      return .failure(problem)
    }
    fill(&boxes.report, from: movie, fragments: boxes.tally)
    return .success(boxes.report)
  }

  /// What the walk over a whole file's top-level boxes found.
  private struct TopLevelBoxes {
    /// The report so far: brands, QuickTime, fragmented, notes.
    var report = ProbeReport(format: .isoBMFF)
    /// The moov box, once met.
    var movieBox: ISOBox?
    /// Whether a box other than moov, moof and the ones a movie has before its moov was met.
    var sawOtherBoxes = false
    /// The type of the last box walked (0 before the first).
    var lastType: UInt32 = 0
    /// The fragments' sample counts and durations, from each moof.
    var tally = ISOFragmentTally()
    /// The boxes walked.
    var steps = 0
    /// The payloads of the mdat boxes.
    var mediaData = ISOMediaData()

    /// Takes in one top-level box after the first-box check: the moov (a second one is
    /// malformed), a moof (added to the tally), or any other box; returns the problem, or nil.
    mutating func add(_ reader: ByteReader, _ box: ISOBox) -> ProbeProblem? {
      switch box.type {
      case moov:
        guard movieBox == nil else { return .malformed("ISO BMFF has two moov boxes") }
        movieBox = box
      case moof:
        report.isFragmented = true
        if let problem = tally.add(reader, moof: box) { return problem }
      default:
        if box.type == mdat { mediaData.add(box) }
        if !movieFileBoxes.contains(box.type) { sawOtherBoxes = true }
      }
      steps += 1
      lastType = box.type
      return nil
    }
  }

  /// Walks the top-level boxes of a whole file: each header whole, inside the file and with a
  /// text type, the first one ftyp or a QuickTime atom; zero padding after the last box ends
  /// the walk (noted).
  private static func walkTopLevel(_ reader: ByteReader) -> Result<TopLevelBoxes, ProbeProblem> {
    var boxes = TopLevelBoxes()
    var position = 0
    walk: while position < reader.count {
      guard boxes.steps < ProbeLimits.maxSteps else {
        return .failure(.malformed("ISO BMFF has too many top-level boxes"))
      }
      let remaining = reader.count - position
      let box: ISOBox
      switch ISOBox.header(reader, at: position, limit: reader.count) {
      case .cut:
        return .failure(.truncated("ISO BMFF ends with \(remaining) bytes, a cut box header"))
      case .invalid(let detail):
        return .failure(.malformed(detail))
      case .box(let found):
        box = found
      }
      guard box.end <= reader.count else {
        return .failure(
          .truncated(
            "box '\(box.typeName)' declares \(box.end - box.start) bytes, only \(remaining) remain"))
      }
      if box.extendsToEnd && box.type == 0 && boxes.steps > 0 {
        boxes.report.notes.append("\(remaining) bytes of zero padding after the last box")
        break walk
      }
      guard ProbeMath.isPrintable(box.type) else {
        return .failure(.malformed("ISO BMFF has a box with a non-text type at offset \(position)"))
      }
      if boxes.steps == 0, let problem = firstBox(reader, box, into: &boxes.report) {
        return .failure(problem)
      }
      if let problem = boxes.add(reader, box) { return .failure(problem) }
      position = box.end
    }
    return .success(boxes)
  }

  /// Checks the first box of a whole file: ftyp (its brands read into `report`) or a box a
  /// QuickTime movie may start with; returns the problem, or nil.
  private static func firstBox(_ reader: ByteReader, _ box: ISOBox, into report: inout ProbeReport)
    -> ProbeProblem?
  {
    if box.type == ftyp {
      if let problem = brands(reader, box, into: &report) { return .malformed(problem) }
    } else if quickTimeFirstBoxes.contains(box.type) {
      report.isQuickTime = true
    } else {
      return .malformed("ISO BMFF starts with '\(box.typeName)', not ftyp")
    }
    return nil
  }

  /// The truncation a parsed movie shows against a file of `fileSize` bytes: a fragmented
  /// movie without fragments or samples of its own, or a track whose media data starts past the
  /// end. Nil when there is none.
  private static func missingMedia(_ movie: ISOMovie, fragments: ISOFragmentTally, fileSize: Int)
    -> ProbeProblem?
  {
    if movie.hasMovieExtends, fragments.fragments == 0, movie.tracks.allSatisfy({ $0.maxChunkOffset == nil })
    {
      return .truncated("fragmented movie has no fragments (cut off after its moov)")
    }
    for track in movie.tracks {
      if let offset = track.maxChunkOffset, offset >= UInt64(fileSize) {
        return .truncated("track \(track.id) has media data at offset \(offset), past the end")
      }
    }
    return nil
  }

  /// The damage a parsed movie's sample tables show against the file's media data: a chunk
  /// offset outside every mdat payload (in a box header, the moov: every sample read there is
  /// garbage), or samples that together take more bytes than all the mdat payloads hold. A
  /// bound check, not a decode; nil when there is none, or no mdat to check against (the data
  /// of a QuickTime reference movie lies in other files).
  private static func misplacedMedia(_ movie: ISOMovie, mediaData: ISOMediaData) -> ProbeProblem? {
    guard !mediaData.ranges.isEmpty, !mediaData.overflowed else { return nil }
    for track in movie.tracks {
      if let offset = track.strayChunkOffset {
        return .malformed(
          "track \(track.id) has a chunk at offset \(offset), outside the media data (mdat payload)")
      }
      if track.sampleBytes > mediaData.totalBytes {
        return .malformed(
          "track \(track.id)'s samples take \(track.sampleBytes) bytes, more than the \(mediaData.totalBytes) of media data"
        )
      }
    }
    return nil
  }

  /// Reads the ftyp brands into `report`; returns the problem (a non-text major brand, a
  /// box too small, or a still-image brand), or nil.
  private static func brands(_ reader: ByteReader, _ box: ISOBox, into report: inout ProbeReport)
    -> String?
  {
    guard box.payloadSize >= 8, let major = reader.u32be(box.payload),
      ProbeMath.isPrintable(major)
    else { return "ftyp box is too small or its major brand is not text" }
    guard !imageBrands.contains(major) else {
      return "ftyp major brand '\(ProbeMath.fourCC(major))' is a still image (HEIF/AVIF), not a movie"
    }
    report.majorBrand = ProbeMath.fourCC(major)
    report.isQuickTime = major == quickTimeBrand
    let count = min((box.payloadSize - 8) / 4, 1_024)
    for index in 0..<count {
      guard let brand = reader.u32be(box.payload + 8 + 4 * index) else { break }
      if brand != 0, ProbeMath.isPrintable(brand) {
        report.compatibleBrands.append(ProbeMath.fourCC(brand))
      }
    }
    return nil
  }

  /// Whether the first child of `box` (a moov running past the prefix) has a printable type
  /// and a size that fits inside the box.
  private static func plausibleChild(_ reader: ByteReader, _ box: ISOBox) -> Bool {
    guard case .box(let child) = ISOBox.header(reader, at: box.payload, limit: box.end) else {
      return false
    }
    return ProbeMath.isPrintable(child.type) && child.end <= box.end
  }

  /// Fills tracks, dimensions, codecs and duration from the parsed movie.
  private static func fill(
    _ report: inout ProbeReport, from movie: ISOMovie, fragments: ISOFragmentTally
  ) {
    report.isFragmented = report.isFragmented || movie.hasMovieExtends
    for track in movie.tracks {
      if track.handler == ISOMovie.vide {
        if !report.hasVideoTrack {
          let width = track.width > 0 ? track.width : track.entryWidth
          let height = track.height > 0 ? track.height : track.entryHeight
          if width > 0, height > 0 {
            report.width = width
            report.height = height
          }
        }
        report.hasVideoTrack = true
      }
      if track.handler == ISOMovie.soun {
        if !report.hasAudioTrack, track.sampleRate > 0, track.channels > 0 {
          report.sampleRate = track.sampleRate
          report.channels = track.channels
        }
        report.hasAudioTrack = true
      }
      if let codec = track.codec {
        let name = ProbeMath.fourCC(codec)
        if !report.codecs.contains(name) { report.codecs.append(name) }
      }
      let kind: MediaStream.Kind =
        track.handler == ISOMovie.vide ? .video : track.handler == ISOMovie.soun ? .audio : .other
      for (index, codec) in track.entryCodecs.enumerated() {
        report.streams.append(
          MediaStream(kind: kind, codec: codec, isDescribed: !track.undescribedEntries.contains(index)))
      }
    }
    report.durationSeconds = duration(of: movie, fragments: fragments)
  }

  /// The movie duration in seconds, from the first source that gives a positive figure: mvhd,
  /// else mehd (both in the mvhd timescale, so neither counts when that is 0), else the
  /// fragments' sum for the main track, else the longest track's mdhd, else the longest tkhd
  /// (mvhd timescale); nil when none is known.
  private static func duration(of movie: ISOMovie, fragments: ISOFragmentTally) -> Double? {
    func positive(_ seconds: Double?) -> Double? { seconds.flatMap { $0 > 0 ? $0 : nil } }
    if let seconds = positive(movie.duration.flatMap { ProbeMath.seconds($0, per: movie.timescale) }) {
      return seconds
    }
    if let seconds = positive(movie.fragmentDuration.flatMap { ProbeMath.seconds($0, per: movie.timescale) })
    {
      return seconds
    }
    if let track = movie.mainTrack,
      let total = fragments.total(for: track.id, defaultDuration: movie.defaultSampleDurations[track.id]),
      let seconds = positive(ProbeMath.seconds(total, per: track.timescale))
    {
      return seconds
    }
    if let longest = positive(
      movie.tracks.compactMap { ProbeMath.seconds($0.duration, per: $0.timescale) }.max())
    {
      return longest
    }
    return positive(
      movie.tracks.compactMap { ProbeMath.seconds($0.headerDuration, per: movie.timescale) }.max())
  }
}
