import CAV

/// The worker's side of an image sequence's rescue (an AVIF or HEIF sequence, an animated AVIF,
/// which libheif does not read and FFmpeg's mov demuxer does): every frame decoded, scaled so
/// that all of them together stay within ``PosterConfiguration/maximumAnimationPixels``,
/// converted to 8-bit RGB (3-3-2, ordered dither: what the `ffmpeg` command's GIF output does
/// without a palette filter) and written as an animated GIF, looping, with the sequence's own
/// frame timing in GIF's 10 ms steps.
///
/// It declines (returns `false`, the caller makes the first frame's still instead) when the
/// sequence has one frame or does not say how many, has more than
/// ``PosterConfiguration/maximumAnimationFrames``, or is not done by `end`.
struct SequenceAnimation {
  /// The settings: the animation budget, the longest edge.
  let configuration: PosterConfiguration

  /// The GIF's frame size: the display size scaled down so that `frames` frames hold at most
  /// `maximumPixels` pixels together and the longer side is at most `maximumEdge`, in even
  /// pixels (at least 2).
  static func size(
    width: Int32, height: Int32, frames: Int, maximumPixels: Int64, maximumEdge: Int
  ) -> (width: Int32, height: Int32) {
    let area = Double(max(1, width)) * Double(max(1, height))
    let perFrame = Double(max(1, maximumPixels)) / Double(max(1, frames))
    let byPixels = (perFrame / area).squareRoot()
    let byEdge = Double(max(16, maximumEdge)) / Double(max(1, max(width, height)))
    let scale = min(1, byPixels, byEdge)
    func even(_ value: Int32) -> Int32 { Int32(max(2, (Double(value) * scale / 2).rounded(.down) * 2)) }
    return (even(width), even(height))
  }

  /// Writes the animation of stream `index` of `input` to `path`.
  /// - Returns: the number of frames written, or `nil` when the sequence is not animated within
  ///   the budget (one frame, a count unknown or over the limit, `end` reached): nothing is
  ///   left to keep at `path` then, and the caller makes a still.
  /// - Throws: a reason when a frame does not decode cleanly or FFmpeg cannot encode or write.
  func make(
    from input: MediaInput, stream: UnsafeMutablePointer<AVStream>, index: Int, av: Libav,
    interrupt: MediaInterrupt, until end: ContinuousClock.Instant?, to path: String
  ) throws(MediaFailure) -> Int? {
    let frames = Int(clamping: stream.pointee.nb_frames)
    guard frames > 1, frames <= configuration.maximumAnimationFrames,
      let parameters = stream.pointee.codecpar
    else { return nil }
    input.discardAll(except: index)
    let size = Self.size(
      width: parameters.pointee.width, height: parameters.pointee.height, frames: frames,
      maximumPixels: configuration.maximumAnimationPixels, maximumEdge: configuration.maximumEdge)
    let decoder = try MediaDecoder(
      stream: stream, threads: 1, maximumPixels: configuration.source.maximumSourceFramePixels, av: av,
      strict: true)
    let scaler = try FrameScaler(width: size.width, height: size.height, format: AV_PIX_FMT_RGB8, av: av)
    let (encoder, writer) = try Self.gifWriter(
      width: size.width, height: size.height, path: path, av: av, interrupt: interrupt)

    var written = 0
    var lastPTS: Int64 = -1
    var step: Int64 = 10  // a frame's duration, in centiseconds, until the sequence says
    let timeBase = stream.pointee.time_base
    let take = { (frame: UnsafeMutablePointer<AVFrame>) throws(MediaFailure) in
      guard written < frames else { return }
      // A new frame each time: the encoder keeps a reference to the last one, to write only
      // what changed since; a frame scaled over in place would look unchanged to it.
      let scaled = try scaler.makeFrame()
      try scaler.scale(frame, into: scaled.pointer)
      (lastPTS, step) = Self.stamp(
        frame.pointee.best_effort_timestamp, after: lastPTS, step: step, timeBase: timeBase, av: av)
      let pts = lastPTS
      scaled.pointer.pointee.pts = pts
      encoder.packetDuration = step
      try encoder.encode(scaled.pointer, into: writer)
      written += 1
    }
    let packet = try OwnedPacket(av: av)
    var fed = 0
    while written < frames {
      if let end, ContinuousClock.now >= end { return nil }
      try interrupt.checkFailure()
      guard try input.read(into: packet.pointer) else {
        try decoder.decode(nil, take)
        break
      }
      defer { av.av_packet_unref(packet.pointer) }
      guard Int(packet.pointer.pointee.stream_index) == index else { continue }
      fed += 1
      if fed > 2 * frames { break }
      try decoder.decode(packet.pointer, take)
    }
    guard written > 1 else { return nil }
    try encoder.encode(nil, into: writer)
    try writer.finish()
    return written
  }

  /// A frame's stamp in centiseconds from its decoder's `stamp` (in `timeBase`; unset: the
  /// last frame's plus `step`), after the last frame's `lastPTS`, with the frame step it
  /// implies: GIF delays are whole centiseconds, at least one per frame.
  private static func stamp(
    _ stamp: Int64, after lastPTS: Int64, step: Int64, timeBase: AVRational, av: Libav
  ) -> (pts: Int64, step: Int64) {
    var pts = stamp == ak_av_nopts_value() ? lastPTS + step : av.av_rescale_q(stamp, timeBase, centiseconds)
    if pts <= lastPTS { pts = lastPTS + 1 }
    return (pts, lastPTS >= 0 ? max(1, pts - lastPTS) : step)
  }

  /// FFmpeg's GIF encoder for `width` × `height` RGB8 frames, opened, and a writer of `path`
  /// with its stream added and its header written.
  /// - Throws: a reason when FFmpeg cannot encode or write.
  private static func gifWriter(
    width: Int32, height: Int32, path: String, av: Libav, interrupt: MediaInterrupt
  ) throws(MediaFailure) -> (MediaEncoder, MediaWriter) {
    let encoder = try MediaEncoder(named: "gif", av: av)
    encoder.context.pointee.width = width
    encoder.context.pointee.height = height
    encoder.context.pointee.pix_fmt = AV_PIX_FMT_RGB8
    encoder.context.pointee.time_base = centiseconds
    encoder.context.pointee.flags |= Int32(AV_CODEC_FLAG_BITEXACT)
    let writer = try MediaWriter(path: path, output: .gif, av: av, interrupt: interrupt)
    try encoder.open([], globalHeader: false)
    encoder.streamIndex = try writer.addEncoded(by: encoder.context)
    try writer.start()
    return (encoder, writer)
  }

  /// GIF's time base: delays are in hundredths of a second.
  static let centiseconds = AVRational(num: 1, den: 100)
}
