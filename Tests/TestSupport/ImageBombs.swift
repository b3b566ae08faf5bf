import Glibc

/// Hostile images for the rescue's work bounds, built from real files' own bytes: the shapes of
/// the security review's bombs (a progressive JPEG whose last scan repeats, an animation of
/// very many frames), each small to store and expensive to decode. Shared by the library's and
/// the server's tests.
public enum ImageBombs {
  /// `jpeg` with its last scan (from its last SOS marker to EOI) repeated `extra` more times:
  /// each repeat is another decoding pass over every coefficient of a progressive JPEG. `nil`
  /// when `jpeg` has no SOS or EOI.
  public static func repeatingLastScan(_ jpeg: [UInt8], extra: Int) -> [UInt8]? {
    guard let end = lastIndex(of: [0xFF, 0xD9], in: jpeg), let scan = lastIndex(of: [0xFF, 0xDA], in: jpeg),
      scan < end
    else { return nil }
    let last = jpeg[scan..<end]
    var bytes = Array(jpeg[..<end])
    bytes.reserveCapacity(jpeg.count + last.count * extra)
    for _ in 0..<extra { bytes += last }
    return bytes + [0xFF, 0xD9]
  }

  /// An animated WebP of `frames` frames, each the image of `still` (a still WebP file: its
  /// `VP8 `, `VP8L` and `ALPH` chunks), `width` × `height` pixels, 40 ms apart. `nil` when
  /// `still` is not a RIFF WebP.
  public static func animatedWebP(still: [UInt8], width: Int, height: Int, frames: Int) -> [UInt8]? {
    guard still.count > 12, still[0..<4].elementsEqual("RIFF".utf8), still[8..<12].elementsEqual("WEBP".utf8)
    else { return nil }
    var image: [UInt8] = []
    var offset = 12
    while offset + 8 <= still.count {
      let fourCC = still[offset..<offset + 4]
      let size = Int(littleEndian32(still, at: offset + 4))
      let end = min(still.count, offset + 8 + size + (size & 1))
      if ["VP8 ", "VP8L", "ALPH"].contains(where: { fourCC.elementsEqual($0.utf8) }) {
        image += still[offset..<end]
      }
      offset = end
    }
    guard !image.isEmpty else { return nil }
    let canvas = uint24(width - 1) + uint24(height - 1)
    let header = chunk("VP8X", [0x02, 0, 0, 0] + canvas) + chunk("ANIM", [0, 0, 0, 0, 0, 0])
    let frame = chunk("ANMF", uint24(0) + uint24(0) + canvas + uint24(40) + [0] + image)
    var body = Array("WEBP".utf8) + header
    body.reserveCapacity(body.count + frame.count * frames)
    for _ in 0..<frames { body += frame }
    return Array("RIFF".utf8) + uint32(body.count) + body
  }

  /// An animated WebP of `frames` frames of one `side` × `side` still that libvips' tool makes
  /// with `operation` (`black`, `gaussnoise`) and the WebP save `options` (`[Q=30]`), written
  /// into `directory` first. `nil` when the tool or the read fails.
  public static func animatedWebP(
    vips operation: String, side: Int, options: String = "", frames: Int, in directory: String
  ) async -> [UInt8]? {
    let path = directory + "/still-\(operation).webp"
    guard await vips([operation, path + options, "\(side)", "\(side)"]) == 0, let still = contents(of: path)
    else {
      return nil
    }
    return animatedWebP(still: still, width: side, height: side, frames: frames)
  }

  /// The bytes of the file at `path`, or `nil`.
  private static func contents(of path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { return bytes }
      bytes += buffer[0..<count]
    }
  }

  /// Runs libvips' command-line tool (`/usr/bin/vips`, from libvips-tools) with `arguments`,
  /// on a thread of its own, to make a source image.
  /// - Returns: its exit status (127 when it cannot start).
  public static func vips(_ arguments: [String]) async -> Int32 {
    await CleanSpawn.run(["/usr/bin/vips"] + arguments)
  }

  private static func lastIndex(of pattern: [UInt8], in bytes: [UInt8]) -> Int? {
    guard bytes.count >= pattern.count else { return nil }
    return (0...(bytes.count - pattern.count)).reversed().first {
      bytes[$0] == pattern[0] && bytes[$0 + 1] == pattern[1]
    }
  }

  private static func chunk(_ fourCC: String, _ payload: [UInt8]) -> [UInt8] {
    Array(fourCC.utf8) + uint32(payload.count) + payload + (payload.count & 1 == 1 ? [0] : [])
  }

  private static func littleEndian32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
  }

  private static func uint24(_ value: Int) -> [UInt8] {
    (0..<3).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
  }

  private static func uint32(_ value: Int) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
  }
}
