/// The frames of an animated WebP, counted from its RIFF chunks before libvips reads a header.
///
/// libvips' header read of an animated WebP asks libwebpdemux for every frame, and that walks
/// the frame list from its start each time: quadratic in the frame count (100,000 frames of
/// 16×16 took 20 s) and not stoppable by libvips' kill. Counting the `ANMF` chunks is one pass
/// over chunk headers, so a source over the frame bound is refused first.
enum WebPFrames {
  /// The size of the windows the chunk headers are read in, in bytes.
  static let window = 64 * 1024

  /// The number of `ANMF` chunks in `file` (0 for a still WebP); `nil` when the file is not a
  /// RIFF WebP. One pass over the chunk headers, read a 64 KiB window at a time (a 100,000-frame
  /// bomb is 86 windows, not 100,000 reads), looking at the clock once a window.
  /// - Throws: `deadline_exceeded` when `deadline` passes during the count.
  static func count(in file: FileBytes, deadline: ContinuousClock.Instant? = nil) throws(AttachmentError)
    -> Int?
  {
    let header = file.bytes(at: 0, count: 12)
    guard header.count == 12, header.starts(with: Array("RIFF".utf8)),
      header[8..<12].elementsEqual("WEBP".utf8)
    else { return nil }
    var offset: Int64 = 12
    var frames = 0
    var buffer: [UInt8] = []
    var bufferStart: Int64 = 0
    while offset + 8 <= file.count {
      if offset < bufferStart || offset + 8 > bufferStart + Int64(buffer.count) {
        if let deadline, ContinuousClock.now >= deadline {
          throw AttachmentError(
            .deadlineExceeded, "The deadline passed while the animation's frames were counted.")
        }
        buffer = file.bytes(at: offset, count: window)
        bufferStart = offset
        guard buffer.count >= 8 else { break }
      }
      let at = Int(offset - bufferStart)
      let size =
        Int64(buffer[at + 4]) | Int64(buffer[at + 5]) << 8 | Int64(buffer[at + 6]) << 16 | Int64(
          buffer[at + 7]) << 24
      if buffer[at] == 0x41, buffer[at + 1] == 0x4E, buffer[at + 2] == 0x4D, buffer[at + 3] == 0x46 {
        frames += 1
      }  // ANMF
      offset += 8 + size + (size & 1)
    }
    return frames
  }
}
