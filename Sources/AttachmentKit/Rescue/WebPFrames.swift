/// The frames of an animated WebP, counted from its RIFF chunks before libvips reads a header.
///
/// libvips' header read of an animated WebP asks libwebpdemux for every frame, and that walks
/// the frame list from its start each time: quadratic in the frame count (100,000 frames of
/// 16×16 took 20 s) and not stoppable by libvips' kill. Counting the `ANMF` chunks is one pass
/// over chunk headers, so a source over the frame bound is refused first.
enum WebPFrames {
  /// The number of `ANMF` chunks in `file` (0 for a still WebP); `nil` when the file is not a
  /// RIFF WebP. One pass over the chunk headers (a 50 MB source of 2 million chunks: ~0.1 s).
  static func count(in file: FileBytes) -> Int? {
    let header = file.bytes(at: 0, count: 12)
    guard header.count == 12, header.starts(with: Array("RIFF".utf8)),
      header[8..<12].elementsEqual("WEBP".utf8)
    else { return nil }
    var offset: Int64 = 12
    var frames = 0
    var chunk = [UInt8](repeating: 0, count: 8)
    let anmf = Array("ANMF".utf8)
    while offset + 8 <= file.count, let start = Int(exactly: offset) {
      guard chunk.withUnsafeMutableBytes({ file.readUnobserved(into: $0, at: start) }) else { break }
      let size = Int64(chunk[4]) | Int64(chunk[5]) << 8 | Int64(chunk[6]) << 16 | Int64(chunk[7]) << 24
      if chunk[0] == anmf[0], chunk[1] == anmf[1], chunk[2] == anmf[2], chunk[3] == anmf[3] { frames += 1 }
      offset += 8 + size + (size & 1)
    }
    return frames
  }
}
