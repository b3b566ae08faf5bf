import CAV

/// Decodes what a re-wrap or a trim copies, so that a damaged bitstream is not delivered as a
/// playable file: a structural check reads a copied stream's packets, not their contents (a
/// fuzz run found 128 of 862 delivered files with decode errors, all carried by stream copy).
///
/// Every packet of a copied audio stream is decoded, and a copied video stream's packets up to
/// its second keyframe (its first group of pictures: what a device shows first, at a fraction
/// of a full decode's cost). Decoders run on one thread with FFmpeg's error concealment off
/// (`AV_EF_EXPLODE` and the checks it strengthens), so damage is an error, not a picture or a
/// sound quietly repaired.
final class CopyCheck {
  private let decoder: MediaDecoder
  private let isVideo: Bool
  private let name: String
  private var keyframes = 0
  private var done = false

  /// A check of `stream`, copied as video or audio.
  /// - Throws: a reason when no allowed decoder reads the stream (a copy that cannot be checked
  ///   is not delivered).
  init(stream: UnsafeMutablePointer<AVStream>, isVideo: Bool, maximumPixels: Int64, av: Libav)
    throws(MediaFailure)
  {
    self.isVideo = isVideo
    name = av.name(of: stream.pointee.codecpar?.pointee.codec_id ?? AV_CODEC_ID_NONE)
    decoder = try MediaDecoder(stream: stream, threads: 1, maximumPixels: maximumPixels, av: av, strict: true)
  }

  /// Decodes `packet`, a packet of the copied stream about to be written.
  func feed(_ packet: UnsafeMutablePointer<AVPacket>) throws(MediaFailure) {
    guard !done else { return }
    if isVideo, packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
      keyframes += 1
      if keyframes > 1 {
        done = true
        return
      }
    }
    try decoder.decode(packet) { _ throws(MediaFailure) in }
  }

  /// Flushes the decoder and refuses the copy when any packet did not decode cleanly.
  func finish() throws(MediaFailure) {
    if !done { try decoder.decode(nil) { _ throws(MediaFailure) in } }
    let damaged = decoder.damagedPackets
    guard damaged > 0 else { return }
    let part = isVideo ? "video (\(name), its first group of pictures)" : "audio (\(name))"
    throw .unrescued(
      "its \(part) would be copied, and does not decode cleanly (\(damaged) damaged packet\(damaged == 1 ? "" : "s"))"
    )
  }
}
