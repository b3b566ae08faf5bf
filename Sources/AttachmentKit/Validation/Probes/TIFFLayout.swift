/// The geometry tags of one TIFF IFD, and the strip or tile count and sizes decoders derive
/// from them (libtiff 4.5's `TIFFNumberOfStrips`, `TIFFNumberOfTiles`, `ByteCountLooksBad`).
struct TIFFLayout {
  /// The IFD tags the probe keeps: size, compression, strips, tiles and sample layout.
  static let tags: Set<UInt16> = [256, 257, 258, 259, 262, 273, 277, 278, 279, 284, 322, 323, 324, 325]

  /// ImageWidth and ImageLength, in pixels (both positive).
  let width: Int
  /// See `width`.
  let height: Int
  /// RowsPerStrip; 2^32 - 1 (one strip) when the tag is absent, as the TIFF 6.0 default.
  let rowsPerStrip: Int
  /// TileWidth and TileLength when the image is tiled.
  let tile: (width: Int, length: Int)?
  /// Compression (1: none).
  let compression: Int
  /// SamplesPerPixel and the first BitsPerSample.
  let samplesPerPixel: Int
  /// See `samplesPerPixel`.
  let bitsPerSample: Int
  /// PlanarConfiguration 2 (one plane per sample): the strips or tiles come once per sample.
  let separatePlanes: Bool

  /// The layout an IFD's `fields` give, with the defaults of TIFF 6.0 for absent tags.
  init(_ reader: ByteReader, fields: [UInt16: TIFFProbe.Entry], width: Int, height: Int) {
    func value(_ tag: UInt16, _ fallback: Int) -> Int { fields[tag]?.scalar(reader) ?? fallback }
    self.width = width
    self.height = height
    rowsPerStrip = value(278, 0xFFFF_FFFF)
    if let across = fields[322]?.scalar(reader), let down = fields[323]?.scalar(reader) {
      tile = (across, down)
    } else {
      tile = nil
    }
    compression = value(259, 1)
    samplesPerPixel = value(277, 1)
    bitsPerSample = value(258, 1)
    separatePlanes = value(284, 1) == 2
  }

  /// The problem with an IFD whose offsets table has `count` entries: a RowsPerStrip or tile
  /// size of 0, a RowsPerStrip so large that libtiff's strip count overflows to 0 ("Cannot
  /// handle zero number of strips": ImageMagick and libvips read nothing), or fewer strips or
  /// tiles than the image needs (libvips refuses the file). Nil when the geometry holds.
  func check(count: Int) -> ProbeProblem? {
    let planes = separatePlanes ? max(samplesPerPixel, 1) : 1
    let needed: Int
    if let tile {
      guard tile.width > 0, tile.length > 0 else {
        return .malformed("TIFF tile size is \(tile.width)×\(tile.length)")
      }
      needed = (width + tile.width - 1) / tile.width * ((height + tile.length - 1) / tile.length) * planes
    } else {
      guard rowsPerStrip > 0 else { return .malformed("TIFF RowsPerStrip is 0") }
      if rowsPerStrip == 0xFFFF_FFFF {
        needed = planes
      } else {
        // libtiff computes (height + rows - 1) / rows in 32 bits and takes an overflow as 0.
        guard height < 0xFFFF_FFFF - (rowsPerStrip - 1) else {
          return .malformed(
            "TIFF RowsPerStrip \(rowsPerStrip) overflows the strip count of a \(height)-row image (decoders compute 0 strips)"
          )
        }
        needed = (height + rowsPerStrip - 1) / rowsPerStrip * planes
      }
    }
    guard count >= needed else {
      let what = tile == nil ? "strips" : "tiles"
      return .malformed("TIFF lists \(count) of the \(needed) \(what) its \(width)×\(height) geometry needs")
    }
    return nil
  }

  /// The bytes strip or tile `index` (of `count`) decodes to, as libtiff's strip and tile
  /// sizes: whole rows of the image's samples (one sample per plane when planar), the last
  /// strip of each plane only the rows left, a tile always whole. Nil on overflow or an
  /// impossible geometry.
  func decodedBytes(of index: Int, count: Int) -> Int? {
    let samples = separatePlanes ? 1 : max(samplesPerPixel, 1)
    guard let pixelBits = ProbeMath.multiply(samples, bitsPerSample), pixelBits > 0 else { return nil }
    if let tile {
      guard let rowBits = ProbeMath.multiply(tile.width, pixelBits) else { return nil }
      return ProbeMath.multiply((rowBits + 7) / 8, tile.length)
    }
    guard let rowBits = ProbeMath.multiply(width, pixelBits), rowsPerStrip > 0 else { return nil }
    let rows = min(rowsPerStrip, height)
    let perPlane = (height + rows - 1) / rows
    let first = index % perPlane * rows
    guard first < height else { return nil }
    return ProbeMath.multiply((rowBits + 7) / 8, min(rows, height - first))
  }

  /// The note for the one case decoders forgive a strip length past the end of the file: a
  /// single uncompressed strip, not tiled, with one plane, whose declared length runs past the
  /// end while every byte its rows need is there. libtiff then calls the length "Bogus" and
  /// computes it from the image size, and ImageMagick and libvips show the image. Nil when the
  /// case does not apply (the strip is then checked as any other).
  func overstatedSingleStrip(_ reader: ByteReader, offsets: TIFFProbe.Entry, sizes: TIFFProbe.Entry)
    -> String?
  {
    guard tile == nil, compression == 1, !separatePlanes || samplesPerPixel == 1, offsets.count == 1,
      sizes.count == 1, let start = offsets.scalar(reader), let declared = sizes.scalar(reader),
      start > 0, start <= reader.count, declared > reader.count - start,
      let bits = ProbeMath.multiply(width, bitsPerSample).flatMap({ ProbeMath.multiply($0, samplesPerPixel) }
      ),
      let needed = ProbeMath.multiply((bits + 7) / 8, height), needed <= reader.count - start
    else { return nil }
    return
      "TIFF strip at offset \(start) declares \(declared) bytes, \(reader.count - start) remain: an overstated strip length (the \(needed) bytes of its pixels are all there; decoders read them)"
  }

  /// The truncation of a strip or tile at `start` declaring `length` bytes, past the end of
  /// a file of `fileSize` bytes: said precisely, since it is either an overstated length or a
  /// file cut short. `tiled`: a tile, not a strip.
  static func pastTheEnd(_ start: Int, _ length: Int, tiled: Bool, fileSize: Int) -> ProbeProblem {
    let what = tiled ? "tile" : "strip"
    guard start < fileSize else {
      return .truncated(
        "TIFF image data at offset \(start) starts past the end of the file (\(fileSize) bytes)")
    }
    return .truncated(
      "TIFF \(what) at offset \(start) declares \(length) bytes, only \(fileSize - start) remain (an overstated \(what) length, or a file cut short)"
    )
  }
}
