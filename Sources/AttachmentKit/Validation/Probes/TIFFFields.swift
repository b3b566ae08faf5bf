/// The IFD fields libtiff 4.5's `TIFFReadDirectory` refuses to read a directory over (so
/// libvips, and ImageMagick after it, cannot open the image): a geometry tag with more than one
/// value or a type that is not an integer ("Incorrect count for", "Incompatible type for"),
/// a PlanarConfiguration other than 1 or 2 ("Bad value"), fewer BitsPerSample values than
/// samples, and a compression no decoder implements ("Compression scheme N strip decoding is
/// not implemented").
///
/// Where a tag appears twice in one IFD, the first is the one libtiff reads, and so the one
/// the probe keeps.
enum TIFFFields {
  /// Tags read as exactly one integer: ImageWidth, ImageLength, SamplesPerPixel,
  /// RowsPerStrip, PlanarConfiguration, TileWidth and TileLength.
  static let singleIntegers: [UInt16: String] = [
    256: "ImageWidth", 257: "ImageLength", 277: "SamplesPerPixel", 278: "RowsPerStrip",
    284: "PlanarConfiguration", 322: "TileWidth", 323: "TileLength",
  ]

  /// Compressions libtiff decodes: none, CCITT (2, 3, 4), LZW, old and new JPEG, Deflate
  /// (both codes), NeXT, CCITT RLEW, PackBits, ThunderScan, PixarLog (both), SGILog (both),
  /// LZMA, Zstandard and WebP.
  static let decodedCompressions: Set<Int> = [
    1, 2, 3, 4, 5, 6, 7, 8, 32766, 32771, 32773, 32809, 32908, 32909, 32946, 34676, 34677, 34925, 50000,
    50001,
  ]

  /// TIFF field types that hold integers (BYTE, SHORT, LONG, their signed forms, LONG8 and
  /// SLONG8), which libtiff converts to the tag's type.
  static let integerTypes: Set<UInt16> = [1, 3, 4, 6, 8, 9, 16, 17]

  /// The problem libtiff finds in the fields of one IFD (the first of each tag), or nil.
  static func problem(_ reader: ByteReader, _ fields: [UInt16: TIFFProbe.Entry]) -> ProbeProblem? {
    for (tag, name) in singleIntegers.sorted(by: { $0.key < $1.key }) {
      guard let entry = fields[tag] else { continue }
      guard integerTypes.contains(entry.type) else {
        return .malformed("TIFF tag \(tag) (\(name)) has field type \(entry.type), not an integer")
      }
      guard entry.count == 1 else {
        return .malformed("TIFF tag \(tag) (\(name)) has \(entry.count) values where libtiff reads one")
      }
    }
    if let planar = fields[284]?.scalar(reader), planar != 1, planar != 2 {
      return .malformed("TIFF PlanarConfiguration is \(planar), not 1 (chunky) or 2 (planar)")
    }
    let samples = fields[277]?.scalar(reader) ?? 1
    if let bits = fields[258] {
      guard integerTypes.contains(bits.type), bits.count == 1 || bits.count >= samples else {
        return .malformed(
          "TIFF BitsPerSample has \(bits.count) values of type \(bits.type) for \(samples) samples a pixel")
      }
    }
    if let compression = fields[259] {
      guard let code = compression.scalar(reader), decodedCompressions.contains(code) else {
        let code = compression.scalar(reader).map(String.init) ?? "unreadable"
        return .malformed("TIFF compression \(code) is not one a decoder implements")
      }
    }
    return nil
  }
}
