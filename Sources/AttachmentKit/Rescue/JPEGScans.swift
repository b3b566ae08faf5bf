import Glibc

/// The scans of a JPEG, counted from its bytes before libvips decodes it.
///
/// A progressive JPEG is decoded by refining every DCT coefficient of the image once per scan,
/// and libjpeg holds all of them until the last scan: the work is scans × pixels and the memory
/// about 2 bytes per coefficient, whatever the file's size. A 2.2 MB file of 15000×15000 whose
/// last scan is repeated 5,000 times costs libjpeg about 2 minutes of CPU, uninterruptibly (it
/// consumes every scan inside one call). So the rescue counts the scans first and refuses what
/// would take too long (``ImageWorkBounds``).
struct JPEGScans: Equatable, Sendable {
  /// Whether the frame is progressive (SOF2, SOF6, SOF10 or SOF14): every coefficient is held
  /// until the last scan.
  var progressive = false
  /// The scans (SOS segments) seen, counted up to the bound the walk was given plus one.
  var count = 0

  /// Walks the markers of `file` from SOI to EOI (or the end of the bytes), skipping each
  /// segment by its length and each scan's entropy-coded data up to the next marker, and stops
  /// early once more than `limit` scans are seen. Reads through a 64 KiB window: constant
  /// memory for any file. A file that is not a JPEG, or whose markers break off, answers what
  /// was counted until then (libvips refuses what does not decode).
  init(of file: FileBytes, countingUpTo limit: Int) {
    var reader = WindowReader(file)
    guard reader.byte(at: 0) == 0xFF, reader.byte(at: 1) == 0xD8 else { return }
    var offset: Int64 = 2
    while let marker = Self.marker(in: &reader, at: &offset) {
      switch marker {
      case 0xD9: return  // EOI
      case 0x01, 0xD0...0xD7: continue  // no length: TEM, RSTn
      default: break
      }
      guard let high = reader.byte(at: offset), let low = reader.byte(at: offset + 1) else { return }
      let length = Int64(high) << 8 | Int64(low)
      guard length >= 2 else { return }
      if [0xC2, 0xC6, 0xCA, 0xCE].contains(marker) { progressive = true }
      offset += length
      guard marker == 0xDA else { continue }
      count += 1
      if count > limit { return }
      guard let next = Self.entropyEnd(in: &reader, from: offset) else { return }
      offset = next
    }
  }

  /// The marker code at `offset` (fill bytes 0xFF skipped), with `offset` moved past it; `nil`
  /// when the bytes there are not a marker or end.
  private static func marker(in reader: inout WindowReader, at offset: inout Int64) -> UInt8? {
    guard reader.byte(at: offset) == 0xFF else { return nil }
    offset += 1
    while let byte = reader.byte(at: offset) {
      offset += 1
      if byte != 0xFF { return byte == 0 ? nil : byte }
    }
    return nil
  }

  /// The offset of the marker that ends the entropy-coded data starting at `offset`: the first
  /// 0xFF followed by neither a stuffed zero nor a restart marker (RST0–RST7, which stay inside
  /// the scan). `nil` when the bytes end first.
  private static func entropyEnd(in reader: inout WindowReader, from offset: Int64) -> Int64? {
    var position = offset
    while let found = reader.nextFF(from: position) {
      guard let next = reader.byte(at: found + 1) else { return nil }
      if next != 0x00 && !(0xD0...0xD7).contains(next) && next != 0xFF { return found }
      position = found + (next == 0xFF ? 1 : 2)
    }
    return nil
  }
}

/// Sequential byte access to a ``FileBytes`` through a 64 KiB window, refilled on a miss.
private struct WindowReader {
  let file: FileBytes
  var start: Int64 = 0
  var window: [UInt8] = []

  init(_ file: FileBytes) { self.file = file }

  /// The byte at `offset`, or `nil` past the end (or on a read error).
  mutating func byte(at offset: Int64) -> UInt8? {
    if offset < start || offset >= start + Int64(window.count) {
      start = offset
      window = file.bytes(at: offset, count: 1 << 16)
      guard !window.isEmpty else { return nil }
    }
    return window[Int(offset - start)]
  }

  /// The offset of the first 0xFF at or after `offset` (found with `memchr`, a window at a
  /// time), or `nil` when the bytes end first.
  mutating func nextFF(from offset: Int64) -> Int64? {
    var position = offset
    while byte(at: position) != nil {
      let base = Int(position - start)
      let found = window.withUnsafeBytes { raw -> Int? in
        guard let address = raw.baseAddress, base < raw.count,
          let hit = memchr(address + base, 0xFF, raw.count - base)
        else { return nil }
        return UnsafeRawPointer(hit) - address
      }
      if let found { return start + Int64(found) }
      position = start + Int64(window.count)
    }
    return nil
  }
}
