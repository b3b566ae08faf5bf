/// The payloads of a file's top-level `mdat` boxes: where a sample table's chunks may lie.
struct ISOMediaData {
  /// The payload ranges, in file order (so ascending and disjoint).
  private(set) var ranges: [Range<Int>] = []
  /// More mdat boxes were met than are kept: nothing is checked against the ranges then.
  private(set) var overflowed = false
  /// The most ranges kept (a fragmented movie has one mdat per fragment, and its chunks are
  /// not in stco).
  static let maximumRanges = 65_536

  /// Takes in a top-level mdat box (which lies inside the file).
  mutating func add(_ box: ISOBox) {
    guard ranges.count < Self.maximumRanges else {
      overflowed = true
      return
    }
    ranges.append(box.payload..<box.end)
  }

  /// The payload bytes of all the mdat boxes together.
  var totalBytes: UInt64 { ranges.reduce(0) { $0 + UInt64($1.count) } }

  /// Whether `offset` lies inside one of the payloads.
  func contains(_ offset: UInt64) -> Bool {
    guard let offset = ProbeMath.int(offset) else { return false }
    var low = 0
    var high = ranges.count
    while low < high {
      let middle = (low + high) / 2
      if ranges[middle].upperBound <= offset {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low < ranges.count && ranges[low].contains(offset)
  }
}

extension ISOMovieParser {
  /// Box types of the sample tables whose entries are only counted here: their entry sizes.
  private static let countedTables: [UInt32: Int] = [
    ProbeMath.code("stts"): 8, ProbeMath.code("ctts"): 8, ProbeMath.code("stss"): 4,
  ]
  /// The sample-to-chunk box.
  private static let stsc = ProbeMath.code("stsc")

  /// stbl: the sample entries of stsd, the chunk offsets of stco / co64 (the largest, and the
  /// first outside `mediaData`), and the sample sizes of stsz. Every table's declared entries
  /// must lie inside its box (ffmpeg reads a table's entries on past its box, into the next
  /// boxes, and fails at the end of the file: "error reading header … End of file"), and the
  /// last stsc run must start at a chunk stco has (else ffmpeg fails "contradictionary STSC and
  /// STCO").
  static func sampleTable(
    _ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack, mediaData: ISOMediaData?
  ) throws(ProbeProblem) {
    var lastFirstChunk: UInt32?
    var chunkCount: Int?
    var units = ISONALUnits()
    for child in try ISOBox.children(reader, of: box).get() {
      switch child.type {
      case stsd:
        try sampleDescription(reader, child, into: &track)
      case stco, co64:
        chunkCount = try chunkOffsets(reader, child, into: &track, mediaData: mediaData)
        units.chunkOffsets = child
      case stsz:
        try sampleSizes(reader, child, into: &track)
        units.sampleSizes = child
      case stsc:
        lastFirstChunk = try sampleToChunk(reader, child)
        units.sampleToChunk = child
      default:
        if let unit = countedTables[child.type] { _ = try entryCount(reader, child, unit: unit) }
      }
    }
    if let lastFirstChunk, Int(lastFirstChunk) > (chunkCount ?? 0) {
      throw .malformed(
        "track \(track.id)'s stsc starts a run at chunk \(lastFirstChunk), but it has \(chunkCount ?? 0) chunks"
      )
    }
    if let size = track.nalLengthSize, let problem = units.problem(reader, lengthSize: size) {
      throw .malformed("track \(track.id)'s " + problem)
    }
  }

  /// The entry count of a full box whose version and flags are followed by a 32-bit count and
  /// then `unit`-byte entries; fails malformed when the entries do not fit in the box.
  static func entryCount(_ reader: ByteReader, _ box: ISOBox, unit: Int, after: Int = 8)
    throws(ProbeProblem) -> Int
  {
    try need(box, after)
    let entries = Int(try field(reader.u32be(box.payload + after - 4), box))
    guard let size = ProbeMath.multiply(entries, unit), size <= box.payloadSize - after else {
      throw .malformed(
        "box '\(box.typeName)' declares \(entries) entries, more than its \(box.payloadSize) bytes hold")
    }
    return entries
  }

  /// stsc: the entries fit in the box; the first chunk of the last run (nil without entries),
  /// at least the number of runs, as ffmpeg repairs it (chunks count from 1, one run a chunk at
  /// least), so a 0 there still needs a chunk.
  private static func sampleToChunk(_ reader: ByteReader, _ box: ISOBox) throws(ProbeProblem) -> UInt32? {
    let entries = try entryCount(reader, box, unit: 12)
    guard entries > 0 else { return nil }
    let first = try field(reader.u32be(box.payload + 8 + (entries - 1) * 12), box)
    return max(first, UInt32(clamping: entries))
  }

  /// stco / co64: every chunk offset, the largest kept, and the first that lies outside the
  /// media data's payloads (when `mediaData` is given and complete).
  /// Returns the number of chunks.
  private static func chunkOffsets(
    _ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack, mediaData: ISOMediaData?
  ) throws(ProbeProblem) -> Int {
    try need(box, 8)
    let wide = box.type == co64
    let entries = Int(try field(reader.u32be(box.payload + 4), box))
    let unit = wide ? 8 : 4
    guard let size = ProbeMath.multiply(entries, unit), size <= box.payloadSize - 8 else {
      throw .malformed("box '\(box.typeName)' holds fewer entries than it declares")
    }
    let checked = mediaData.flatMap { $0.overflowed || $0.ranges.isEmpty ? nil : $0 }
    var largest: UInt64?
    for index in 0..<entries {
      let at = box.payload + 8 + index * unit
      let value = wide ? try field(reader.u64be(at), box) : UInt64(try field(reader.u32be(at), box))
      largest = max(largest ?? 0, value)
      if track.strayChunkOffset == nil, let checked, !checked.contains(value) {
        track.strayChunkOffset = value
      }
    }
    if let largest { track.maxChunkOffset = max(track.maxChunkOffset ?? 0, largest) }
    return entries
  }

  /// stsz: the total of the sample sizes (one size for all samples, or one entry each).
  private static func sampleSizes(_ reader: ByteReader, _ box: ISOBox, into track: inout ISOTrack)
    throws(ProbeProblem)
  {
    try need(box, 12)
    let common = UInt64(try field(reader.u32be(box.payload + 4), box))
    let count = Int(try field(reader.u32be(box.payload + 8), box))
    if common != 0 {
      track.sampleBytes += common * UInt64(count)
      return
    }
    guard let size = ProbeMath.multiply(count, 4), size <= box.payloadSize - 12 else {
      throw .malformed("box 'stsz' holds fewer entries than it declares")
    }
    var total: UInt64 = 0
    for index in 0..<count {
      total += UInt64(try field(reader.u32be(box.payload + 12 + index * 4), box))
    }
    track.sampleBytes += total
  }
}
