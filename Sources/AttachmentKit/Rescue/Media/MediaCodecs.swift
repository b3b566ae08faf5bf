import CAV

/// A decoder for one input stream: packets in, frames out. Used on one thread; freed when
/// released.
final class MediaDecoder {
  let av: Libav
  let context: UnsafeMutablePointer<AVCodecContext>
  private let owned: OwnedFrame
  private var frame: UnsafeMutablePointer<AVFrame> { owned.pointer }

  /// The most pixels a decoded frame may have (FFmpeg's `max_pixels`).
  private let maximumPixels: Int64
  /// Whether the stream parameters gave a frame size (an image piped through FFmpeg, a BMP,
  /// gives none until its frame is decoded).
  private let sizeDeclared: Bool
  /// Packets the decoder refused or frames it could not produce: damage, skipped as players do.
  private(set) var damagedPackets = 0

  /// Opens the allowed decoder of `stream`, with `threads` threads. FFmpeg itself refuses to
  /// allocate a frame of more than `maximumPixels` (a later keyframe may declare a size its
  /// stream parameters did not). `strict`: error concealment off (``CopyCheck``), so that
  /// damage is counted in ``damagedPackets`` rather than repaired, and the loop filter skipped
  /// (its frames are checked, never shown).
  init(
    stream: UnsafeMutablePointer<AVStream>, threads: Int, maximumPixels: Int64, av: Libav,
    strict: Bool = false
  )
    throws(MediaFailure)
  {
    self.maximumPixels = maximumPixels
    sizeDeclared =
      (stream.pointee.codecpar?.pointee.width ?? 0) > 0 && (stream.pointee.codecpar?.pointee.height ?? 0) > 0
    self.av = av
    owned = try OwnedFrame(av: av)
    let parameters = stream.pointee.codecpar
    guard let codec = av.avcodec_find_decoder(parameters?.pointee.codec_id ?? AV_CODEC_ID_NONE),
      MediaAllowlist.decoders.contains(String(cString: codec.pointee.name)),
      let context = av.avcodec_alloc_context3(codec)
    else { throw .unrescued("no allowed decoder reads it") }
    // Every property is set: from here a throw runs deinit, which frees the context.
    self.context = context
    guard av.avcodec_parameters_to_context(context, parameters) >= 0 else {
      throw .unrescued("bad stream parameters")
    }
    context.pointee.pkt_timebase = stream.pointee.time_base
    context.pointee.thread_count = Int32(clamping: max(0, threads))
    context.pointee.max_pixels = max(1, maximumPixels)
    if strict {
      context.pointee.err_recognition = AV_EF_CRCCHECK | AV_EF_BITSTREAM | AV_EF_BUFFER | AV_EF_EXPLODE
      // The in-loop deblocking filter smooths decoded pictures and finds no damage: a check
      // that only wants the bitstream's errors skips it (about a seventh of an H.264 decode).
      context.pointee.skip_loop_filter = AVDISCARD_ALL
    }
    let code = av.avcodec_open2(context, codec, nil)
    guard code >= 0 else { throw .unrescued("its decoder does not open (\(av.message(code)))") }
  }

  deinit {
    var context: UnsafeMutablePointer<AVCodecContext>? = context
    av.avcodec_free_context(&context)
  }

  /// Decodes `packet` (`nil`: the end, flushes the decoder) and hands each frame to `body`,
  /// which must not keep it. A damaged packet is skipped, as players do.
  /// - Throws: `too_many_pixels` when a frame's size is over the budget (FFmpeg refused it
  ///   before allocating it, or it came out of the decoder larger).
  func decode(
    _ packet: UnsafeMutablePointer<AVPacket>?,
    _ body: (UnsafeMutablePointer<AVFrame>) throws(MediaFailure) -> Void
  ) throws(MediaFailure) {
    let sent = av.avcodec_send_packet(context, packet)
    if sent < 0 {
      try checkRefusedSize()
      if sent != ak_averror_eof() && sent != ak_averror_eagain() { damagedPackets += 1 }
    }
    guard sent >= 0 || sent == ak_averror_eof() || packet != nil else {
      throw .unrescued("its decoder fails (\(av.message(sent)))")
    }
    while true {
      let code = av.avcodec_receive_frame(context, frame)
      if code == ak_averror_eagain() || code == ak_averror_eof() { return }
      guard code >= 0 else {
        try checkRefusedSize()
        damagedPackets += 1
        return  // a damaged frame: skipped
      }
      defer { av.av_frame_unref(frame) }
      try checkSize(width: frame.pointee.width, height: frame.pointee.height)
      try body(frame)
    }
  }

  /// After a decoding error: FFmpeg zeroes a video decoder's size when it refuses one over
  /// `max_pixels` (`ff_set_dimensions`), which no damaged frame of an accepted size does. A
  /// stream that declared no size has none to lose: its error is damage, not a refused size.
  private func checkRefusedSize() throws(MediaFailure) {
    guard context.pointee.codec_type == AVMEDIA_TYPE_VIDEO, sizeDeclared,
      context.pointee.width == 0 || context.pointee.height == 0
    else { return }
    throw .error(
      AttachmentError(
        .tooManyPixels,
        "A frame of the video declares a size over the rescue's budget of \(maximumPixels) pixels, which its stream parameters did not: not decoded."
      ))
  }

  private func checkSize(width: Int32, height: Int32) throws(MediaFailure) {
    guard context.pointee.codec_type == AVMEDIA_TYPE_VIDEO, Int64(width) * Int64(height) > maximumPixels
    else { return }
    throw .error(
      AttachmentError(
        .tooManyPixels,
        "A frame of the video decoded at \(width)×\(height), over the rescue's budget of \(maximumPixels) pixels."
      ))
  }
}

/// An encoder for one output stream: frames in, packets to the writer. Used on one thread.
final class MediaEncoder {
  let av: Libav
  let context: UnsafeMutablePointer<AVCodecContext>
  private let owned: OwnedPacket
  private var packet: UnsafeMutablePointer<AVPacket> { owned.pointer }
  /// The writer's stream this encoder fills, once added.
  var streamIndex: Int32 = -1
  /// The duration given to a packet the encoder leaves without one, in its time base (x264
  /// leaves them all: the last frame would otherwise last no time in the MP4).
  var packetDuration: Int64 = 0

  /// Allocates the encoder called `name` (not opened: set its fields, then ``open(_:)``).
  init(named name: String, av: Libav) throws(MediaFailure) {
    self.av = av
    owned = try OwnedPacket(av: av)
    guard let codec = av.avcodec_find_encoder_by_name(name), let context = av.avcodec_alloc_context3(codec)
    else {
      throw .unrescued("FFmpeg has no \(name) encoder")
    }
    self.context = context
  }

  deinit {
    var context: UnsafeMutablePointer<AVCodecContext>? = context
    av.avcodec_free_context(&context)
  }

  /// Opens the encoder with `options` (FFmpeg's `key=value` private options, e.g. x264's preset).
  func open(_ options: [(String, String)], globalHeader: Bool) throws(MediaFailure) {
    if globalHeader { context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER) }
    var dictionary: OpaquePointer?
    defer { av.av_dict_free(&dictionary) }
    for (key, value) in options { _ = av.av_dict_set(&dictionary, key, value, 0) }
    let code = av.avcodec_open2(context, context.pointee.codec, &dictionary)
    guard code >= 0 else { throw .unrescued("its encoder does not open (\(av.message(code)))") }
  }

  /// Encodes `frame` (`nil`: the end, flushes the encoder) and writes each packet.
  func encode(_ frame: UnsafeMutablePointer<AVFrame>?, into writer: MediaWriter) throws(MediaFailure) {
    try encode(frame) { (packet) throws(MediaFailure) in
      if packet.pointee.duration <= 0 { packet.pointee.duration = packetDuration }
      try writer.write(packet, stream: streamIndex, from: context.pointee.time_base)
    }
  }

  /// Encodes `frame` (`nil`: the end, flushes the encoder) and hands each packet to `body`,
  /// which must not keep it.
  func encode(
    _ frame: UnsafeMutablePointer<AVFrame>?,
    _ body: (UnsafeMutablePointer<AVPacket>) throws(MediaFailure) -> Void
  ) throws(MediaFailure) {
    let sent = av.avcodec_send_frame(context, frame)
    guard sent >= 0 || sent == ak_averror_eof() else {
      throw .unrescued("its encoder fails (\(av.message(sent)))")
    }
    while true {
      let code = av.avcodec_receive_packet(context, packet)
      if code == ak_averror_eagain() || code == ak_averror_eof() { return }
      guard code >= 0 else { throw .unrescued("its encoder fails (\(av.message(code)))") }
      defer { av.av_packet_unref(packet) }
      try body(packet)
    }
  }
}
