/// Structural check of a JPEG (ITU T.81): SOI, the marker segments up to the frame header
/// (SOFn: width, height), and on the whole file the scans up to the EOI marker.
///
/// Decision on trailing data: iOS decoders stop at EOI and ignore what follows (Exif writers,
/// MPF and "motion photo" files append data there), so bytes after EOI are accepted and noted
/// in `ProbeReport.notes`. A file that ends before EOI is truncated.
enum JPEGProbe {
  /// Identifies a JPEG from a prefix: SOI, then marker segments that chain correctly up to the
  /// frame header or the end of the prefix. Nil when a marker or length is wrong, or the
  /// prefix does not reach the first segment's header.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    walk(reader, toEnd: false).identified
  }

  /// Checks a whole JPEG file: every segment inside the file, a frame header, at least one
  /// scan, and EOI. Fails truncated when the file ends before EOI, malformed on a bad marker,
  /// a missing frame header or scan, or tables and scan headers libjpeg refuses (see
  /// ``JPEGTables``).
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    walk(reader, toEnd: true).inspected
  }

  /// Most stray bytes skipped where a marker should be.
  private static let maxExtraneousBytes = 256

  /// Whether `marker` is a frame header: SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
  static func isStartOfFrame(_ marker: UInt8) -> Bool {
    (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
  }

  /// Walks the marker segments from SOI. With `toEnd` false it stops at the frame header;
  /// otherwise it continues through the scans to EOI. Never reads past `reader.count`.
  private static func walk(_ reader: ByteReader, toEnd: Bool) -> ProbeWalk {
    guard reader.u8(0) == 0xFF, reader.u8(1) == 0xD8, reader.u8(2) == 0xFF else {
      return .invalid("no JPEG SOI marker")
    }
    var report = ProbeReport(format: .jpeg)
    var position = 2
    var segments = 0
    var sawScan = false
    var tables = JPEGTables()
    /// Running out of bytes: truncated for a file, too little to go on for a short prefix.
    func cut() -> ProbeWalk {
      segments == 0 && !toEnd
        ? .invalid("JPEG prefix too short") : .cut(report, "JPEG ends before its EOI marker")
    }
    for _ in 0..<ProbeLimits.maxSteps {
      let marker: UInt8
      let markerAt: Int
      switch findMarker(reader, from: position, into: &report) {
      case .cut: return cut()
      case .invalid(let problem): return .invalid(problem)
      case .found(let code, let offset): (marker, markerAt) = (code, offset)
      }
      switch marker {
      case 0xD9:
        return endOfImage(report, at: markerAt, sawScan: sawScan, fileSize: reader.count)
      case 0x01, 0xD0...0xD7:
        position = markerAt + 1
        continue
      case 0xC0...0xFE where marker != 0xD8:
        break
      default:
        return .invalid("JPEG has an invalid marker FF" + ProbeMath.hex(marker))
      }
      guard let length = reader.u16be(markerAt + 1) else { return cut() }
      guard length >= 2 else { return .invalid("JPEG segment length below 2") }
      segments += 1
      let segmentEnd = markerAt + 1 + Int(length)
      if isStartOfFrame(marker) && report.codecs.isEmpty {
        switch frameHeader(reader, marker: marker, at: markerAt, into: &report) {
        case .some(let problem): return problem
        case .none: if !toEnd { return .complete(report) }
        }
      }
      if toEnd, segmentEnd <= reader.count,
        let problem = tables.check(reader, marker: marker, lengthAt: markerAt + 1, end: segmentEnd)
      {
        return .invalid(problem)
      }
      sawScan = sawScan || marker == 0xDA
      switch following(reader, marker: marker, end: segmentEnd, toEnd: toEnd, into: &report) {
      case .next(let next): position = next
      case .stop(let ending): return ending
      }
    }
    return .invalid("JPEG has too many segments")
  }

  /// Where the walk goes after a segment.
  private enum Following {
    /// On to the marker expected at this offset.
    case next(Int)
    /// The walk ends here.
    case stop(ProbeWalk)
  }

  /// Where the walk goes after the segment of `marker` that ends at `end`: past a scan's
  /// entropy-coded data, past an APPn segment to where libjpeg reads on (see
  /// ``appSegmentEnd(_:declared:prefix:into:)``, and on the whole file
  /// ``unsupportedMarker(_:after:)``), else to `end`.
  private static func following(
    _ reader: ByteReader, marker: UInt8, end: Int, toEnd: Bool, into report: inout ProbeReport
  ) -> Following {
    if marker == 0xDA {
      guard !report.codecs.isEmpty else { return .stop(.invalid("JPEG scan before its frame header")) }
      guard let next = nextMarker(reader, after: end) else {
        return .stop(.cut(report, "JPEG ends inside scan data, before its EOI marker"))
      }
      return .next(next)
    }
    guard (0xE0...0xEF).contains(marker) else { return .next(end) }
    if toEnd, let problem = unsupportedMarker(reader, after: end) { return .stop(.invalid(problem)) }
    return .next(appSegmentEnd(reader, declared: end, prefix: !toEnd, into: &report))
  }

  /// What looking for the next marker found.
  private enum MarkerSearch {
    /// The marker code and its offset (after the FF and any fill bytes).
    case found(UInt8, at: Int)
    /// The bytes end first.
    case cut
    /// Too many stray bytes where a marker should be.
    case invalid(String)
  }

  /// Finds the marker expected at `position`: skips a few stray bytes before its FF (as libjpeg
  /// does, noted in `report`) and any fill bytes after it.
  private static func findMarker(_ reader: ByteReader, from position: Int, into report: inout ProbeReport)
    -> MarkerSearch
  {
    guard let byte = reader.u8(position) else { return .cut }
    var start = position
    if byte != 0xFF {
      // libjpeg skips "extraneous bytes before marker" with a warning; so do we, a few.
      let limit = min(position + maxExtraneousBytes + 1, reader.count)
      guard let next = reader.firstIndex(of: 0xFF, from: position, to: limit) else {
        return limit == reader.count ? .cut : .invalid("JPEG has no marker at offset \(position)")
      }
      report.notes.append("\(next - position) extraneous bytes before a JPEG marker (skipped)")
      start = next
    }
    var markerAt = start + 1
    while reader.u8(markerAt) == 0xFF { markerAt += 1 }  // fill bytes; ends at end of file
    guard let marker = reader.u8(markerAt) else { return .cut }
    return .found(marker, at: markerAt)
  }

  /// The problem when libjpeg, reading on from the declared end of an APPn segment, meets a
  /// marker it does not know: it skips bytes up to an FF, fill bytes and stuffed FF00 as
  /// "extraneous bytes", and takes the next code as the marker, so a segment declared short
  /// whose real tail holds "FF 80" stops it ("Unsupported marker type 0x80"), and libvips
  /// cannot open the image. Nil when the marker it finds is one it reads (or none within
  /// 64 KiB, which the walk judges).
  private static func unsupportedMarker(_ reader: ByteReader, after declared: Int) -> String? {
    let limit = min(reader.count, declared + 65_536)
    var search = declared
    while let found = reader.firstIndex(of: 0xFF, from: search, to: limit) {
      var markerAt = found + 1
      while markerAt < limit, reader.u8(markerAt) == 0xFF { markerAt += 1 }
      guard let code = reader.u8(markerAt) else { return nil }
      if code == 0x00 {
        search = markerAt + 1
        continue
      }
      guard code != 0x01, code < 0xC0 else { return nil }
      return
        "JPEG has FF\(ProbeMath.hex(code)) at offset \(found) where libjpeg reads the marker after an APP segment (Unsupported marker type 0x\(ProbeMath.hex(code)))"
    }
    return nil
  }

  /// Where an APPn segment really ends. Some writers (phone cameras among them) declare an
  /// APP0 length shorter than what they wrote; libjpeg and libvips skip to the next marker.
  /// When no valid marker starts at the declared end, the next one within 64 KiB (the most a
  /// segment can hold) is taken instead and the gap noted; without one, the declared end
  /// stands and the walk judges what is there. On a `prefix` (the sniffing window), a next
  /// segment that runs past the window's end is not held against the declared end: a large
  /// ICC profile or Exif block (many 64 KiB APP2 / APP1 segments) is legal.
  private static func appSegmentEnd(
    _ reader: ByteReader, declared: Int, prefix: Bool, into report: inout ProbeReport
  ) -> Int {
    if isValidMarker(reader, at: declared, prefix: prefix) { return declared }
    var search = declared
    let limit = min(reader.count, declared + 65_536)
    while let found = reader.firstIndex(of: 0xFF, from: search, to: limit) {
      if isValidMarker(reader, at: found, prefix: prefix) {
        report.notes.append(
          "a JPEG APP segment declares a length \(found - declared) bytes short of where the next marker starts (skipped to it)"
        )
        return found
      }
      search = found + 1
    }
    return declared
  }

  /// Whether a marker that may follow a segment starts at `offset`: FF (and fill bytes), then
  /// a marker code from C0 to FE other than SOI, whose segment (for codes with a length) has a
  /// length of at least 2 and ends inside the file (or, on a `prefix`, may end past it).
  private static func isValidMarker(_ reader: ByteReader, at offset: Int, prefix: Bool) -> Bool {
    guard reader.u8(offset) == 0xFF else { return false }
    var markerAt = offset + 1
    var fill = 0
    while reader.u8(markerAt) == 0xFF, fill < 16 {
      markerAt += 1
      fill += 1
    }
    guard let marker = reader.u8(markerAt), marker >= 0xC0, marker != 0xFF, marker != 0xD8 else {
      return false
    }
    if marker == 0xD9 || (0xD0...0xD7).contains(marker) { return true }
    guard let length = reader.u16be(markerAt + 1), length >= 2 else { return false }
    return prefix || markerAt + 1 + Int(length) <= reader.count
  }

  /// Reads the frame header (SOFn) at `markerAt` into `report`. Returns nil when it is valid,
  /// else the walk's ending: cut when the header runs past the bytes, invalid on bad values.
  private static func frameHeader(
    _ reader: ByteReader, marker: UInt8, at markerAt: Int, into report: inout ProbeReport
  ) -> ProbeWalk? {
    guard let length = reader.u16be(markerAt + 1), let precision = reader.u8(markerAt + 3),
      let height = reader.u16be(markerAt + 4), let width = reader.u16be(markerAt + 6),
      let components = reader.u8(markerAt + 8)
    else { return .cut(report, "JPEG ends inside its frame header") }
    guard (1...4).contains(components), Int(length) == 8 + 3 * Int(components) else {
      return .invalid("JPEG frame header has \(components) components for length \(length)")
    }
    guard (2...16).contains(precision) else {
      return .invalid("JPEG frame header has sample precision \(precision)")
    }
    guard width > 0 else { return .invalid("JPEG frame header has width 0") }
    guard height > 0 else {
      return .invalid("JPEG frame header has height 0 (height from a DNL marker is not supported)")
    }
    report.width = Int(width)
    report.height = Int(height)
    let kind = Int(marker) - 0xC0
    report.codecs = ["SOF\(kind)"]
    if kind > 2 {
      report.notes.append(
        "JPEG uses SOF\(kind) (lossless, hierarchical or arithmetic coding), which iOS may not decode")
    }
    return nil
  }

  /// The offset of the first marker after entropy-coded data starting at `start` (skipping
  /// stuffed FF00, RSTn and fill bytes), or nil when the bytes end first.
  private static func nextMarker(_ reader: ByteReader, after start: Int) -> Int? {
    var scan = start
    while scan < reader.count {
      guard let ff = reader.firstIndex(of: 0xFF, from: scan, to: reader.count),
        let next = reader.u8(ff + 1)
      else { return nil }
      switch next {
      case 0x00, 0xD0...0xD7: scan = ff + 2
      case 0xFF: scan = ff + 1
      default: return ff
      }
    }
    return nil
  }

  /// The ending at EOI: complete when a frame header and a scan came before it (trailing
  /// bytes noted), invalid otherwise.
  private static func endOfImage(
    _ report: ProbeReport, at markerAt: Int, sawScan: Bool, fileSize: Int
  ) -> ProbeWalk {
    guard !report.codecs.isEmpty else { return .invalid("JPEG has no frame header before EOI") }
    guard sawScan else { return .invalid("JPEG has no scan before EOI") }
    let trailing = fileSize - (markerAt + 1)
    return .complete(
      trailing > 0 ? noted(report, "\(trailing) bytes after the JPEG EOI marker (ignored)") : report)
  }

  /// `report` with `note` appended.
  private static func noted(_ report: ProbeReport, _ note: String) -> ProbeReport {
    var copy = report
    copy.notes.append(note)
    return copy
  }
}
