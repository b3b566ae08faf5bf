/// What a JPEG 2000's main header declares, read before OpenJPEG sees the file: the SIZ marker
/// (image area, tiles, components), a JP2's `ihdr` box, and the COD marker's decomposition
/// levels. OpenJPEG allocates from these as it reads the header (structures for every tile and
/// component) and decodes every sample as a 32-bit integer, so a 2 KB codestream can declare a
/// decode of gigabytes (issue 52, item 5: `Xsiz` mutated to 2,097,216 drove a worker to 718 MB).
struct JPEG2000Header: Equatable, Sendable {
  /// The image area's width (`Xsiz − XOsiz`), in pixels; for a JP2 the larger of it and `ihdr`'s.
  var width: Int64
  /// The image area's height (`Ysiz − YOsiz`), in pixels; for a JP2 the larger of it and `ihdr`'s.
  var height: Int64
  /// The number of components (`Csiz`; for a JP2 the larger of it and `ihdr`'s `NC`).
  var components: Int64
  /// The number of tiles the SIZ grid declares.
  var tiles: Int64
  /// The COD marker's decomposition levels; `nil` when the main header has none before the
  /// first tile.
  var decompositionLevels: Int?

  /// The header of the JPEG 2000 in `file` (a JP2/JPX or a bare codestream), or `nil` when no
  /// SIZ marker is where the format puts it (the loader then fails on its own).
  init?(of file: FileBytes) {
    let start = file.bytes(at: 0, count: 12)
    var ihdr: (width: Int64, height: Int64, components: Int64)?
    var codestream: Int64 = 0
    if start.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) {
      codestream = 0
    } else if start.count == 12, start[4...7].elementsEqual(Array("jP  ".utf8)) {
      guard let found = Self.boxes(of: file, ihdr: &ihdr) else { return nil }
      codestream = found
    } else {
      return nil
    }
    guard let siz = Self.siz(of: file, at: codestream) else { return nil }
    width = max(siz.width, ihdr?.width ?? 0)
    height = max(siz.height, ihdr?.height ?? 0)
    components = max(siz.components, ihdr?.components ?? 0)
    tiles = siz.tiles
    decompositionLevels = Self.levels(of: file, after: codestream + 4 + siz.length)
  }

  /// Walks a JP2's top-level boxes (and `jp2h`'s) for `ihdr`; returns where the `jp2c` box's
  /// codestream starts.
  private static func boxes(
    of file: FileBytes, ihdr: inout (width: Int64, height: Int64, components: Int64)?
  ) -> Int64? {
    var offset: Int64 = 0
    var visited = 0
    while offset + 8 <= file.count, visited < 64 {
      visited += 1
      let header = file.bytes(at: offset, count: 16)
      guard header.count >= 8 else { return nil }
      var length = Int64(Self.uint32(header, 0))
      var headerLength: Int64 = 8
      if length == 1 {
        guard header.count == 16 else { return nil }
        length = Int64(clamping: Self.uint64(header, 8))
        headerLength = 16
      } else if length == 0 {
        length = file.count - offset
      }
      guard length >= headerLength else { return nil }
      let type = String(decoding: header[4..<8], as: UTF8.self)
      switch type {
      case "jp2c": return offset + headerLength
      case "jp2h":
        // A superbox: walk into it, and on to the file's boxes after it.
        offset += headerLength
        continue
      case "ihdr":
        let body = file.bytes(at: offset + headerLength, count: 10)
        if body.count == 10 {
          ihdr = (
            width: Int64(Self.uint32(body, 4)), height: Int64(Self.uint32(body, 0)),
            components: Int64(Self.uint16(body, 8))
          )
        }
      default: break
      }
      let (next, overflow) = offset.addingReportingOverflow(length)
      guard !overflow else { return nil }
      offset = next
    }
    return nil
  }

  /// The SIZ marker segment at `offset` (just after SOC): area, tiles, components and its length.
  private static func siz(
    of file: FileBytes, at offset: Int64
  ) -> (width: Int64, height: Int64, components: Int64, tiles: Int64, length: Int64)? {
    let bytes = file.bytes(at: offset, count: 42)
    guard bytes.count == 42, bytes[0] == 0xFF, bytes[1] == 0x4F, bytes[2] == 0xFF, bytes[3] == 0x51 else {
      return nil
    }
    let length = Int64(uint16(bytes, 4))
    let xsiz = Int64(uint32(bytes, 8))
    let ysiz = Int64(uint32(bytes, 12))
    let xOffset = Int64(uint32(bytes, 16))
    let yOffset = Int64(uint32(bytes, 20))
    let tileWidth = Int64(uint32(bytes, 24))
    let tileHeight = Int64(uint32(bytes, 28))
    let tileXOffset = Int64(uint32(bytes, 32))
    let tileYOffset = Int64(uint32(bytes, 36))
    let components = Int64(uint16(bytes, 40))
    guard xsiz > xOffset, ysiz > yOffset, tileWidth > 0, tileHeight > 0, tileXOffset <= xOffset,
      tileYOffset <= yOffset
    else { return nil }
    // Tiles across and down: ceil((Xsiz − XTOsiz) / XTsiz), and the same down (values < 2^32).
    let across = (xsiz - tileXOffset + tileWidth - 1) / tileWidth
    let down = (ysiz - tileYOffset + tileHeight - 1) / tileHeight
    return (xsiz - xOffset, ysiz - yOffset, components, across * down, length)
  }

  /// The decomposition levels of the first COD marker of the main header starting at `offset`,
  /// `nil` when the first tile (SOT) or the end comes first, or 64 markers were read.
  private static func levels(of file: FileBytes, after offset: Int64) -> Int? {
    var position = offset
    for _ in 0..<64 {
      let bytes = file.bytes(at: position, count: 10)
      guard bytes.count >= 4, bytes[0] == 0xFF else { return nil }
      switch bytes[1] {
      case 0x52:  // COD: Lcod, Scod, progression, layers (2), MCT, then SPcod's levels
        return bytes.count == 10 ? Int(bytes[9]) : nil
      case 0x90, 0xD9: return nil  // SOT, EOC
      default:
        position += 2 + Int64(uint16(bytes, 2))
      }
    }
    return nil
  }

  private static func uint16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
    UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
  }

  private static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(uint16(bytes, at)) << 16 | UInt32(uint16(bytes, at + 2))
  }

  private static func uint64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
    UInt64(uint32(bytes, at)) << 32 | UInt64(uint32(bytes, at + 4))
  }
}

extension ImageWorkBounds {
  /// Refuses a JPEG 2000 whose header declares more than the rescue allows, before OpenJPEG
  /// reads it: an image area over the decode budget (`too_many_pixels`), more samples than
  /// ``RescueConfiguration/maximumJPEG2000Samples`` (OpenJPEG holds each as 32 bits:
  /// `too_many_pixels`), more tiles than ``RescueConfiguration/maximumJPEG2000Tiles`` or more
  /// than 32 decomposition levels (`too_complex`). A file whose header cannot be read is left
  /// to the loader, which fails on its own.
  func checkJPEG2000(path: String, detected: String?) throws(AttachmentError) {
    guard let file = try? FileBytes(path: path), let header = JPEG2000Header(of: file) else { return }
    let (pixels, overflow) = header.width.multipliedReportingOverflow(by: header.height)
    if overflow || pixels > configuration.maximumSourcePixels {
      throw AttachmentError(
        .tooManyPixels,
        "The JPEG 2000 declares \(header.width)×\(header.height) pixels, over the rescue's decode budget of \(configuration.maximumSourcePixels) pixels.",
        detected: detected)
    }
    let (samples, overflowSamples) = pixels.multipliedReportingOverflow(by: max(1, header.components))
    if overflowSamples || samples > configuration.maximumJPEG2000Samples {
      throw AttachmentError(
        .tooManyPixels,
        "The JPEG 2000 declares \(header.width)×\(header.height) pixels of \(header.components) components, over the rescue's budget of \(configuration.maximumJPEG2000Samples) samples for JPEG 2000 (OpenJPEG holds each as 32 bits).",
        detected: detected)
    }
    if header.tiles > Int64(configuration.maximumJPEG2000Tiles) {
      throw AttachmentError(
        .tooComplex,
        "The JPEG 2000 declares \(header.tiles) tiles, over the rescue's limit of \(configuration.maximumJPEG2000Tiles) (OpenJPEG sets up every tile while it reads the header).",
        detected: detected)
    }
    if let levels = header.decompositionLevels, levels > 32 {
      throw AttachmentError(
        .tooComplex,
        "The JPEG 2000 declares \(levels) decomposition levels, over the standard's 32.",
        detected: detected)
    }
  }
}

extension RescueConfiguration {
  /// The most samples (pixels × components) a JPEG 2000 may declare: the budget of a
  /// progressive JPEG (``maximumProgressivePixels``), whose decoder likewise holds the whole
  /// image at once. OpenJPEG keeps each sample as 32 bits: 50 million by default, about
  /// 190 MiB (16 megapixels of RGB).
  var maximumJPEG2000Samples: Int64 { maximumProgressivePixels }

  /// The most tiles a JPEG 2000 may declare: OpenJPEG sets up structures for every tile and
  /// component while it reads the header, before a pixel is decoded (32,769 tiles of 3
  /// components took hundreds of megabytes). 4096 tiles is a 16-gigapixel image in 2048 × 2048
  /// tiles.
  var maximumJPEG2000Tiles: Int { 4096 }
}
