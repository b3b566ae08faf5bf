/// The compressed strips or tiles of one TIFF IFD walked as libtiff decodes them, so that
/// image data libtiff cannot read (libvips: "tiff2vips: read error") is refused. Only LZW
/// (compression 5) is walked, with ``TIFFLZW``; YCbCr images (whose strips are subsampled) and
/// old-style LZW strips are left to the decoder.
///
/// The work is bounded: the compressed bytes walked over the whole file may not exceed
/// ``budgetPerFileByte`` times its size (IFDs may share strips); past that, strips are not
/// walked (not refused), and neither is a strip whose rows would be over
/// ``maximumStripBytes``.
struct TIFFStripData {
  /// The compressed bytes walked per byte of the file, at most.
  static let budgetPerFileByte = 4
  /// The most bytes one strip's rows may take for it to be walked: 256 MiB.
  static let maximumStripBytes = 256 * 1_024 * 1_024
  /// The compressed bytes read at a time.
  static let pieceSize = 65_536

  /// Compressed bytes that may still be walked.
  private var budget: Int

  /// The walker for a file of `fileSize` bytes.
  init(fileSize: Int) {
    budget = ProbeMath.multiply(fileSize, Self.budgetPerFileByte) ?? .max
  }

  /// Walks the strips or tiles of an IFD (every one inside the file, as checked before) whose
  /// geometry is `layout`; the problem of the first one libtiff would not decode, else nil.
  mutating func check(
    _ reader: ByteReader, layout: TIFFLayout, photometric: Int?, offsets: TIFFProbe.Entry,
    sizes: TIFFProbe.Entry
  ) -> ProbeProblem? {
    guard layout.compression == 5, photometric != 6 else { return nil }
    for index in 0..<offsets.count {
      guard let start = offsets.element(reader, index), let length = sizes.element(reader, index),
        let expected = layout.decodedBytes(of: index, count: offsets.count),
        expected <= Self.maximumStripBytes, length <= budget
      else { return nil }
      budget -= length
      if let problem = walk(reader, start: start, length: length, expected: expected) {
        let what = layout.tile == nil ? "strip" : "tile"
        return .malformed("TIFF \(what) \(index) at offset \(start): \(problem)")
      }
    }
    return nil
  }

  /// Walks one strip of `length` compressed bytes at `start` that decodes to `expected`
  /// bytes; its problem, or nil.
  private func walk(_ reader: ByteReader, start: Int, length: Int, expected: Int) -> String? {
    var codes = TIFFLZW(expected: expected)
    var position = start
    let end = start + length
    while position < end {
      let count = min(Self.pieceSize, end - position)
      // A read fails only once the walk is stopped; the caller sees that in `reader.stop`.
      guard let piece = reader.bytes(at: position, count: count) else { return nil }
      if position == start, TIFFLZW.isOldStyle(piece) { return nil }
      if let problem = codes.feed(piece) { return problem }
      if codes.finished { return nil }
      position += count
    }
    return codes.finish()
  }
}
