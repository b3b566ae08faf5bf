/// Structural check of a classic TIFF ("II*\0" little-endian or "MM\0*" big-endian): the IFD
/// chain, the width (256) and height (257) tags, and on the whole file that every IFD and every
/// strip (273/279) or tile (324/325) lies inside the file. Frames are the IFDs (pages).
/// BigTIFF (version 43) is not accepted.
enum TIFFProbe {
  /// Identifies a TIFF from a prefix: byte order, 42, an IFD0 offset of at least 8, and when
  /// IFD0 lies in the prefix a non-zero entry count and valid field types; dimensions when
  /// both tags are in the prefix. Nil otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    guard let little = byteOrder(reader), let first = reader.u32(4, littleEndian: little),
      first >= 8
    else { return nil }
    var report = ProbeReport(format: .tiff)
    let directory = Int(first)
    guard let entries = reader.u16(directory, littleEndian: little) else { return report }
    guard entries > 0 else { return nil }
    var width: Int?
    var height: Int?
    for index in 0..<Int(entries) {
      guard let entry = Entry(reader, at: directory + 2 + 12 * index, littleEndian: little) else {
        break
      }
      guard (1...13).contains(entry.type) else { return nil }
      if entry.tag == 256 { width = entry.scalar(reader) }
      if entry.tag == 257 { height = entry.scalar(reader) }
    }
    if let width, let height, width > 0, height > 0 {
      report.width = width
      report.height = height
    }
    return report
  }

  /// Checks a whole TIFF: each IFD in the chain (no loops, at most 4096) inside the file with
  /// every out-of-line value array inside the file, width, height, and strip or tile offsets
  /// whose data lies inside the file. Truncated when an IFD, a value array or image data lies
  /// past the end; malformed on missing tags,
  /// mismatched offset and byte-count arrays, or a loop.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    guard let little = byteOrder(reader), let first = reader.u32(4, littleEndian: little) else {
      return .failure(.malformed("no TIFF header"))
    }
    var report = ProbeReport(format: .tiff)
    var next = Int(first)
    var visited = Set<Int>()
    var tables = StripTables(fileSize: reader.count)
    while next != 0 {
      guard visited.count < ProbeLimits.maxTIFFDirectories else {
        return .failure(.malformed("TIFF has too many IFDs"))
      }
      guard next >= 8, visited.insert(next).inserted else {
        return .failure(.malformed("TIFF IFD offset \(next) is invalid or loops"))
      }
      switch directory(reader, at: next, littleEndian: little, into: &report, tables: &tables) {
      case .success(let following): next = following
      case .failure(let problem): return .failure(problem)
      }
    }
    guard !visited.isEmpty else { return .failure(.malformed("TIFF has no IFD")) }
    report.frames = visited.count
    return .success(report)
  }

  /// True for "II*\0", false for "MM\0*", nil for anything else (including BigTIFF).
  private static func byteOrder(_ reader: ByteReader) -> Bool? {
    if reader.matches([0x49, 0x49, 0x2A, 0x00], at: 0) { return true }
    if reader.matches([0x4D, 0x4D, 0x00, 0x2A], at: 0) { return false }
    return nil
  }

  /// The strip and tile tables the walk has checked, so that no table is read twice.
  ///
  /// IFDs may point at one shared table (a crafted file has 4,096 IFDs share one table of
  /// 4.9 million entries): a pair of tables already checked is not read again, and the bytes
  /// of distinct tables read over the whole chain may not exceed the file's size, so the work
  /// stays proportional to the file (overlapping but shifted tables are refused).
  private struct StripTables {
    /// (offsets table, byte counts table) pairs already checked, as [offset, type, offset,
    /// type, entries].
    private var checkedPairs = Set<[Int]>()
    /// Tables (offset, bytes) already counted.
    private var counted = Set<[Int]>()
    /// Bytes of distinct tables read so far.
    private(set) var bytesRead = 0
    /// The walk over compressed strips, with its budget for the whole file.
    var data: TIFFStripData

    /// The tables of a file of `fileSize` bytes.
    init(fileSize: Int) {
      data = TIFFStripData(fileSize: fileSize)
    }

    /// Whether the pair was checked before; otherwise records it, and the bytes of each of its
    /// tables not counted yet.
    mutating func isChecked(offsets: Entry, sizes: Entry) -> Bool {
      let pair = [offsets.valuesAt, Int(offsets.type), sizes.valuesAt, Int(sizes.type), offsets.count]
      guard checkedPairs.insert(pair).inserted else { return true }
      for table in [offsets, sizes] where counted.insert([table.valuesAt, table.byteSize]).inserted {
        bytesRead = ProbeMath.add(bytesRead, table.byteSize) ?? .max
      }
      return false
    }
  }

  /// Checks the IFD at `offset`; the first one fills the report. Returns the next IFD's
  /// offset (0 at the end of the chain) or the problem.
  private static func directory(
    _ reader: ByteReader, at offset: Int, littleEndian little: Bool, into report: inout ProbeReport,
    tables: inout StripTables
  ) -> Result<Int, ProbeProblem> {
    guard let count = reader.u16(offset, littleEndian: little) else {
      return .failure(.truncated("TIFF ends before IFD at offset \(offset)"))
    }
    guard count > 0 else { return .failure(.malformed("TIFF IFD at offset \(offset) is empty")) }
    let nextAt = offset + 2 + 12 * Int(count)
    guard let next = reader.u32(nextAt, littleEndian: little) else {
      return .failure(.truncated("TIFF ends inside IFD at offset \(offset)"))
    }
    var fields: [UInt16: Entry] = [:]
    for index in 0..<Int(count) {
      guard let entry = Entry(reader, at: offset + 2 + 12 * index, littleEndian: little) else {
        return .failure(.truncated("TIFF ends inside IFD at offset \(offset)"))
      }
      guard entry.valuesInside(reader) else {
        return .failure(.truncated("TIFF tag \(entry.tag) has values past the end of the file"))
      }
      // libtiff reads the first of a repeated tag.
      if TIFFLayout.tags.contains(entry.tag), fields[entry.tag] == nil { fields[entry.tag] = entry }
    }
    if let problem = TIFFFields.problem(reader, fields) { return .failure(problem) }
    guard let width = fields[256]?.scalar(reader), let height = fields[257]?.scalar(reader),
      width > 0, height > 0
    else { return .failure(.malformed("TIFF IFD at offset \(offset) has no width or height")) }
    if report.width == nil, let problem = describe(reader, fields, at: offset, into: &report) {
      return .failure(problem)
    }
    guard let offsets = fields[273] ?? fields[324], let sizes = fields[279] ?? fields[325] else {
      return .failure(.malformed("TIFF IFD at offset \(offset) has no strip or tile offsets"))
    }
    let layout = TIFFLayout(reader, fields: fields, width: width, height: height)
    if let problem = layout.check(count: offsets.count) { return .failure(problem) }
    if let note = layout.overstatedSingleStrip(reader, offsets: offsets, sizes: sizes) {
      report.notes.append(note)
      return .success(Int(next))
    }
    if tables.isChecked(offsets: offsets, sizes: sizes) { return .success(Int(next)) }
    guard tables.bytesRead <= reader.count else {
      return .failure(
        .malformed("TIFF strip/tile tables add up to \(tables.bytesRead) bytes, more than the file holds"))
    }
    if let problem = checkImageData(reader, offsets: offsets, sizes: sizes) { return .failure(problem) }
    let photometric = fields[262]?.scalar(reader)
    if let problem = tables.data.check(
      reader, layout: layout, photometric: photometric, offsets: offsets, sizes: sizes)
    {
      return .failure(problem)
    }
    return .success(Int(next))
  }

  /// Fills the report from the first IFD's `fields` (at `offset`): its size and compression.
  /// The problem when its samples cannot be shown as colours, else nil.
  private static func describe(
    _ reader: ByteReader, _ fields: [UInt16: Entry], at offset: Int, into report: inout ProbeReport
  ) -> ProbeProblem? {
    // The image shown must say how its samples are colours: TIFF 6.0 requires the tag, and
    // without it neither libtiff-based decoders nor libvips show the image.
    guard let photometric = fields[262]?.scalar(reader) else {
      return .malformed(
        "TIFF IFD at offset \(offset) has no PhotometricInterpretation (tag 262), which TIFF requires")
    }
    // RGB and YCbCr are three samples a pixel: with fewer (SamplesPerPixel left out, so 1),
    // libtiff reads the strips as something else and libvips fails on every tile.
    let samples = fields[277]?.scalar(reader) ?? 1
    if photometric == 2 || photometric == 6, samples < 3 {
      return .malformed(
        "TIFF's PhotometricInterpretation \(photometric == 2 ? "RGB" : "YCbCr") needs 3 samples a pixel; SamplesPerPixel says \(samples)"
      )
    }
    report.width = fields[256]?.scalar(reader)
    report.height = fields[257]?.scalar(reader)
    let compression = fields[259]?.scalar(reader) ?? 1
    report.codecs = [compressionName(compression)]
    return nil
  }

  /// Checks that each strip or tile (offset + byte count) lies inside the file, reading the
  /// two arrays element by element (never materialising them).
  private static func checkImageData(_ reader: ByteReader, offsets: Entry, sizes: Entry)
    -> ProbeProblem?
  {
    guard offsets.count == sizes.count, offsets.count > 0 else {
      return .malformed("TIFF strip/tile offsets and byte counts differ in number")
    }
    guard offsets.isUnsignedInteger, sizes.isUnsignedInteger else {
      return .malformed("TIFF strip/tile offsets are not SHORT or LONG")
    }
    // SHORT values end below 64 KiB: when even the largest offset plus the largest count fit
    // in the file, no entry can point past its end, and the tables need not be read.
    let largest = (offsets.type == 3 ? 0xFFFF : 0xFFFF_FFFF) + (sizes.type == 3 ? 0xFFFF : 0xFFFF_FFFF)
    if largest <= reader.count { return nil }
    // In batches: one read of each table per 8,192 entries, not two reads per entry.
    var index = 0
    while index < offsets.count {
      let batch = min(8_192, offsets.count - index)
      guard let starts = offsets.batch(reader, from: index, count: batch),
        let lengths = sizes.batch(reader, from: index, count: batch)
      else { return .truncated("TIFF ends inside its strip/tile tables") }
      let beyond: (start: Int, length: Int)? = starts.withUnsafeBytes { starts in
        lengths.withUnsafeBytes { lengths in
          for element in 0..<batch {
            let start = offsets.value(in: starts, element)
            let length = sizes.value(in: lengths, element)
            if start + length > reader.count { return (start, length) }  // both below 2^32
          }
          return nil
        }
      }
      if let beyond {
        return TIFFLayout.pastTheEnd(
          beyond.start, beyond.length, tiled: offsets.tag == 324, fileSize: reader.count)
      }
      index += batch
    }
    return nil
  }

  /// A short name for a TIFF compression code.
  private static func compressionName(_ code: Int) -> String {
    switch code {
    case 1: "tiff-uncompressed"
    case 5: "tiff-lzw"
    case 6, 7: "tiff-jpeg"
    case 8, 32946: "tiff-deflate"
    case 32773: "tiff-packbits"
    default: "tiff-compression-\(code)"
    }
  }

  /// One 12-byte IFD entry: tag, field type, value count, and where the values are (inline
  /// in the entry when they fit in 4 bytes, else at the offset the entry holds).
  struct Entry {
    let tag: UInt16
    let type: UInt16
    let count: Int
    let valuesAt: Int
    /// Bytes the values take (Int.max when that overflows; 0 for unknown types, which readers
    /// skip).
    let byteSize: Int
    let littleEndian: Bool

    /// Reads the entry at `offset`; nil when it is outside the bytes or its values' offset
    /// cannot be read.
    init?(_ reader: ByteReader, at offset: Int, littleEndian little: Bool) {
      guard let tag = reader.u16(offset, littleEndian: little),
        let type = reader.u16(offset + 2, littleEndian: little),
        let count = reader.u32(offset + 4, littleEndian: little)
      else { return nil }
      let unit: Int
      switch type {
      case 1, 2, 6, 7: unit = 1
      case 3, 8: unit = 2
      case 4, 9, 11, 13: unit = 4
      case 5, 10, 12: unit = 8
      default: unit = 0
      }
      let size = ProbeMath.multiply(Int(count), unit) ?? Int.max
      if size <= 4 {
        valuesAt = offset + 8
      } else {
        guard let pointer = reader.u32(offset + 8, littleEndian: little) else { return nil }
        valuesAt = Int(pointer)
      }
      self.tag = tag
      self.type = type
      self.count = Int(count)
      self.byteSize = size
      self.littleEndian = little
    }

    /// Whether values stored outside the entry lie inside the file.
    func valuesInside(_ reader: ByteReader) -> Bool {
      byteSize <= 4 || reader.contains(valuesAt, byteSize)
    }

    /// Whether the values are SHORT or LONG.
    var isUnsignedInteger: Bool { type == 3 || type == 4 }

    /// Value `index` of a SHORT or LONG array, or nil when out of range or another type.
    func element(_ reader: ByteReader, _ index: Int) -> Int? {
      guard index >= 0, index < count else { return nil }
      switch type {
      case 3: return reader.u16(valuesAt + 2 * index, littleEndian: littleEndian).map(Int.init)
      case 4: return reader.u32(valuesAt + 4 * index, littleEndian: littleEndian).map(Int.init)
      default: return nil
      }
    }

    /// The bytes of `count` values of a SHORT or LONG array from `first` (at most 16,384, so
    /// they are one read), or nil when out of range, another type, or outside the file.
    func batch(_ reader: ByteReader, from first: Int, count wanted: Int) -> [UInt8]? {
      let unit = type == 3 ? 2 : 4
      guard isUnsignedInteger, first >= 0, wanted >= 0, wanted <= 16_384, first + wanted <= count else {
        return nil
      }
      return reader.bytes(at: valuesAt + unit * first, count: unit * wanted)
    }

    /// Value `index` of a batch of this SHORT or LONG array's bytes (`index` must be inside it).
    func value(in bytes: UnsafeRawBufferPointer, _ index: Int) -> Int {
      if type == 3 {
        let (first, second) = (Int(bytes[2 * index]), Int(bytes[2 * index + 1]))
        return littleEndian ? first | second << 8 : first << 8 | second
      }
      let at = 4 * index
      let (b0, b1, b2, b3) = (Int(bytes[at]), Int(bytes[at + 1]), Int(bytes[at + 2]), Int(bytes[at + 3]))
      return littleEndian ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b0 << 24 | b1 << 16 | b2 << 8 | b3
    }

    /// The single value of a SHORT or LONG field (its first element).
    func scalar(_ reader: ByteReader) -> Int? { element(reader, 0) }
  }
}
