/// Structural check of a GIF87a / GIF89a: header, logical screen descriptor, global colour
/// table, then the blocks: extensions (0x21) and images (0x2C) with their sub-block chains,
/// up to the trailer (0x3B). Frames are the image descriptors counted.
///
/// `identify` walks the blocks inside the prefix with strict rules (known extension labels
/// and their fixed block sizes, an LZW code size of 2...8, at least one image before the
/// trailer), so text that merely starts with "GIF89a" is not taken for a GIF.
enum GIFProbe {
  /// Identifies a GIF from a prefix: header, a plausible screen descriptor and the blocks that
  /// follow inside the prefix (at least the first block introducer must be there). Nil
  /// otherwise.
  static func identify(_ reader: ByteReader) -> ProbeReport? {
    walk(reader, strict: true).identified
  }

  /// Checks a whole GIF: every block and sub-block inside the file, at least one image, and
  /// the trailer. Truncated when the file ends before the trailer; malformed on an unknown
  /// block introducer, a bad LZW code size, an LZW code stream a decoder refuses (see
  /// ``GIFLZW``) or no image.
  static func inspect(_ reader: ByteReader) -> Result<ProbeReport, ProbeProblem> {
    walk(reader, strict: false).inspected
  }

  /// Walks the blocks; `strict` is identify's mode (prefix, tighter plausibility rules).
  private static func walk(_ reader: ByteReader, strict: Bool) -> ProbeWalk {
    guard reader.matches(Array("GIF87a".utf8), at: 0) || reader.matches(Array("GIF89a".utf8), at: 0)
    else { return .invalid("no GIF header") }
    var report = ProbeReport(format: .gif)
    guard let width = reader.u16le(6), let height = reader.u16le(8), let packed = reader.u8(10),
      reader.contains(0, 13)
    else { return strict ? .invalid("GIF prefix too short") : .cut(report, "GIF ends in its header") }
    guard width > 0, height > 0 else { return .invalid("GIF logical screen has a zero dimension") }
    report.width = Int(width)
    report.height = Int(height)
    let globalTable = packed & 0x80 != 0 ? 3 << (Int(packed & 0x07) + 1) : 0
    var blocks = BlockWalk(strict: strict, report: report, firstBlock: 13 + globalTable)
    for _ in 0..<ProbeLimits.maxSteps {
      if let ending = blocks.step(reader) { return ending }
    }
    return .invalid("GIF has too many blocks")
  }

  /// The block walk's state: the report so far, where the next block starts, the images and
  /// stray zero bytes counted.
  private struct BlockWalk {
    /// Identify's mode: known extension labels only, tighter LZW code sizes.
    let strict: Bool
    var report: ProbeReport
    /// Where the first block (after the screen descriptor and global colour table) starts.
    let firstBlock: Int
    var position: Int
    var frames = 0
    var strayZeros = 0

    init(strict: Bool, report: ProbeReport, firstBlock: Int) {
      self.strict = strict
      self.report = report
      self.firstBlock = firstBlock
      position = firstBlock
    }

    /// The ending when the bytes run out, with the images counted so far.
    func cut(_ detail: String) -> ProbeWalk {
      var report = report
      report.frames = frames
      return .cut(report, detail)
    }

    /// Walks the block at the current position: a stray zero byte, the trailer, an extension
    /// or an image. Returns the walk's ending, or nil to go on.
    mutating func step(_ reader: ByteReader) -> ProbeWalk? {
      guard let introducer = reader.u8(position) else {
        if strict && position == firstBlock { return .invalid("GIF prefix too short") }
        return cut("GIF ends before its trailer")
      }
      switch introducer {
      case 0x00:
        // Stray zero bytes between blocks (an extra sub-block terminator): decoders skip them.
        position += 1
        strayZeros += 1
        guard strayZeros <= 256 else { return .invalid("GIF has long runs of zero bytes between blocks") }
        return nil
      case 0x3B: return trailer(reader)
      case 0x21: return extensionBlock(reader)
      case 0x2C: return imageBlock(reader)
      default: return .invalid("GIF has an unknown block introducer 0x" + ProbeMath.hex(introducer))
      }
    }

    /// The ending at the trailer: complete when an image came before it (stray zeros and
    /// trailing bytes noted), invalid otherwise.
    func trailer(_ reader: ByteReader) -> ProbeWalk {
      guard frames > 0 else { return .invalid("GIF has no image before its trailer") }
      var report = report
      report.frames = frames
      if strayZeros > 0 { report.notes.append("\(strayZeros) stray zero bytes between GIF blocks") }
      let trailing = reader.count - (position + 1)
      if trailing > 0 { report.notes.append("\(trailing) bytes after the GIF trailer (ignored)") }
      return .complete(report)
    }

    /// Skips the extension block at the current position (label, then sub-blocks), checking
    /// its label and first block size in strict mode. Returns the walk's ending, or nil.
    mutating func extensionBlock(_ reader: ByteReader) -> ProbeWalk? {
      guard let label = reader.u8(position + 1) else { return cut("GIF ends before its trailer") }
      if strict, let problem = strictExtensionProblem(reader, label: label, at: position + 2) {
        return .invalid(problem)
      }
      guard let next = skipSubBlocks(reader, from: position + 2) else {
        return cut("GIF ends inside an extension block")
      }
      position = next
      return nil
    }

    /// Walks the image block at the current position and counts it. Returns the walk's
    /// ending, or nil.
    mutating func imageBlock(_ reader: ByteReader) -> ProbeWalk? {
      switch image(reader, at: position, strict: strict) {
      case .next(let next):
        frames += 1
        position = next
        return nil
      case .cut:
        return cut("GIF ends inside an image")
      case .invalid(let problem):
        return .invalid(problem)
      }
    }
  }

  /// Where one image block leaves the walk.
  private enum ImageStep {
    /// The image is complete; the next block starts at this offset.
    case next(Int)
    /// The bytes end inside the image.
    case cut
    /// The image is wrong.
    case invalid(String)
  }

  /// Walks one image: descriptor (10 bytes), optional local colour table, LZW minimum code
  /// size, and the data sub-blocks; on the whole file (not `strict`) their LZW codes too (see
  /// ``GIFLZW``).
  private static func image(_ reader: ByteReader, at position: Int, strict: Bool) -> ImageStep {
    guard let packed = reader.u8(position + 9) else { return .cut }
    let localTable = packed & 0x80 != 0 ? 3 << (Int(packed & 0x07) + 1) : 0
    let codeSizeAt = position + 10 + localTable
    guard let codeSize = reader.u8(codeSizeAt) else { return .cut }
    let allowed: ClosedRange<UInt8> = strict ? 2...8 : 1...12
    guard allowed.contains(codeSize) else {
      return .invalid("GIF image has LZW minimum code size \(codeSize)")
    }
    guard !strict else {
      guard let next = skipSubBlocks(reader, from: codeSizeAt + 1) else { return .cut }
      return .next(next)
    }
    // The whole file: the LZW codes are followed as a decoder builds its table.
    guard var codes = GIFLZW(minimumCodeSize: Int(codeSize)) else {
      return .invalid("GIF image has LZW minimum code size \(codeSize), which decoders refuse")
    }
    var position = codeSizeAt + 1
    while position < reader.count {
      guard let size = reader.u8(position) else { return .cut }
      position += 1
      if size == 0 { return .next(position) }
      guard let block = reader.bytes(at: position, count: Int(size)) else { return .cut }
      if let problem = codes.feed(block) { return .invalid("GIF image data is damaged: " + problem) }
      position += Int(size)
    }
    return .cut
  }

  /// Identify's rules for an extension: a known label (plain text, graphic control, comment,
  /// application) with its fixed first block size. Returns the problem, or nil when fine or
  /// when the size byte is past the prefix.
  private static func strictExtensionProblem(
    _ reader: ByteReader, label: UInt8, at sizeAt: Int
  ) -> String? {
    let expected: UInt8?
    switch label {
    case 0x01: expected = 12
    case 0xF9: expected = 4
    case 0xFF: expected = 11
    case 0xFE: expected = nil
    default: return "GIF has an unknown extension label 0x" + ProbeMath.hex(label)
    }
    guard let expected, let size = reader.u8(sizeAt) else { return nil }
    return size == expected ? nil : "GIF extension 0x\(ProbeMath.hex(label)) has block size \(size)"
  }

  /// Skips a chain of sub-blocks (size byte + data) ending with a zero size byte; returns the
  /// offset after the terminator, or nil when the bytes end first.
  private static func skipSubBlocks(_ reader: ByteReader, from start: Int) -> Int? {
    var position = start
    while position < reader.count {
      guard let size = reader.u8(position) else { return nil }
      position += 1
      if size == 0 { return position }
      position += Int(size)
    }
    return nil
  }
}
