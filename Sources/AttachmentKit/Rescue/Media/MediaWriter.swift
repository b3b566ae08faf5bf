import CAV

/// The delivered file being written: FFmpeg's muxer over a local path, with `moov` first for
/// MP4. Used on one thread; frees everything when released (the caller removes a file that
/// was not finished).
final class MediaWriter {
  let av: Libav
  /// The muxer's context (owned).
  let context: UnsafeMutablePointer<AVFormatContext>
  private var opened = false
  private let path: String
  private let output: MediaPlan.Output
  /// The decoding timestamp last written to each output stream, in its time base.
  private var lastDTS: [Int32: Int64] = [:]

  /// Prepares a muxer of `output`'s kind for `path`; streams are added before ``start()``.
  init(path: String, output: MediaPlan.Output, av: Libav, interrupt: MediaInterrupt) throws(MediaFailure) {
    self.av = av
    self.path = path
    self.output = output
    var context: UnsafeMutablePointer<AVFormatContext>?
    // The name is kept: MP4's second pass (moov first) opens the file again by it.
    guard av.avformat_alloc_output_context2(&context, nil, output.muxer, "file:" + path) >= 0, let context
    else {
      throw .unrescued("FFmpeg has no \(output.muxer) muxer")
    }
    context.pointee.interrupt_callback = interrupt.callback
    self.context = context
  }

  deinit {
    if opened { _ = av.avio_closep(&context.pointee.pb) }
    av.avformat_free_context(context)
  }

  /// Whether encoders must put their headers in extradata (MP4 does).
  var wantsGlobalHeader: Bool { (context.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0 }

  /// Adds a stream copied from `parameters`; returns its index.
  func addCopy(of parameters: UnsafePointer<AVCodecParameters>, timeBase: AVRational) throws(MediaFailure)
    -> Int32
  {
    guard let stream = av.avformat_new_stream(context, nil),
      av.avcodec_parameters_copy(stream.pointee.codecpar, parameters) >= 0
    else { throw .unrescued("FFmpeg cannot add a stream") }
    // The muxer picks the tag of its own container (Matroska's and AVI's mean nothing in MP4);
    // HEVC gets `hvc1`, the tag iOS plays.
    stream.pointee.codecpar.pointee.codec_tag =
      parameters.pointee.codec_id == AV_CODEC_ID_HEVC && (output == .mp4 || output == .m4a)
      ? Self.tag("hvc1") : 0
    stream.pointee.time_base = timeBase
    return stream.pointee.index
  }

  /// Adds a stream an opened encoder writes; returns its index.
  func addEncoded(by encoder: UnsafeMutablePointer<AVCodecContext>) throws(MediaFailure) -> Int32 {
    guard let stream = av.avformat_new_stream(context, nil),
      av.avcodec_parameters_from_context(stream.pointee.codecpar, encoder) >= 0
    else { throw .unrescued("FFmpeg cannot add a stream") }
    stream.pointee.time_base = encoder.pointee.time_base
    return stream.pointee.index
  }

  /// Gives output stream `index` the display matrix of input `stream`, if it has one: a phone's
  /// portrait video is stored landscape with a 90° rotation, which a copy or a transcode keeps
  /// (the frames are not turned), so without it the delivered video would play sideways.
  /// - Throws: "out of memory".
  func keepOrientation(of stream: UnsafeMutablePointer<AVStream>, on index: Int32) throws(MediaFailure) {
    var size = 0
    guard let matrix = av.av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 36,
      index >= 0, index < Int32(context.pointee.nb_streams), let output = context.pointee.streams[Int(index)]
    else { return }
    guard let copy = av.av_stream_new_side_data(output, AV_PKT_DATA_DISPLAYMATRIX, size) else {
      throw .unrescued("out of memory")
    }
    copy.update(from: matrix, count: size)
  }

  /// Opens the file and writes the header (MP4: `moov` moved to the front at the end).
  func start() throws(MediaFailure) {
    let code = av.avio_open2(
      &context.pointee.pb, "file:" + path, AVIO_FLAG_WRITE, &context.pointee.interrupt_callback, nil)
    guard code >= 0 else { throw .error(AttachmentError(.ioError, "Cannot write the rescued file.")) }
    opened = true
    var options: OpaquePointer?
    defer { av.av_dict_free(&options) }
    if output == .mp4 || output == .m4a { _ = av.av_dict_set(&options, "movflags", "+faststart", 0) }
    let written = av.avformat_write_header(context, &options)
    guard written >= 0 else { throw .unrescued("FFmpeg cannot write the header (\(av.message(written)))") }
  }

  /// Writes `packet` (its timestamps in `timeBase`) to stream `index`; takes its data.
  func write(_ packet: UnsafeMutablePointer<AVPacket>, stream index: Int32, from timeBase: AVRational)
    throws(MediaFailure)
  {
    guard let stream = context.pointee.streams[Int(index)] else { return }
    packet.pointee.stream_index = index
    av.av_packet_rescale_ts(packet, timeBase, stream.pointee.time_base)
    packet.pointee.pos = -1
    // Never a file whose decoding timestamps go backwards (issue 52, item 4): the transcoders
    // and the copy keep them increasing, and a packet that would not is refused here, by name.
    let dts = packet.pointee.dts
    if dts != ak_av_nopts_value() {
      if let last = lastDTS[index], dts <= last {
        throw .unrescued("its timestamps go backwards (a packet decoded at \(dts) after one at \(last))")
      }
      lastDTS[index] = dts
    }
    let code = av.av_interleaved_write_frame(context, packet)
    guard code >= 0 else { throw .unrescued("FFmpeg cannot write a packet (\(av.message(code)))") }
  }

  /// Writes the trailer (and, for MP4, moves `moov` to the front) and closes the file.
  func finish() throws(MediaFailure) {
    let code = av.av_write_trailer(context)
    guard code >= 0 else { throw .unrescued("FFmpeg cannot finish the file (\(av.message(code)))") }
    _ = av.avio_closep(&context.pointee.pb)
    opened = false
  }

  private static func tag(_ text: String) -> UInt32 {
    text.utf8.reversed().reduce(0) { $0 << 8 | UInt32($1) }
  }
}
