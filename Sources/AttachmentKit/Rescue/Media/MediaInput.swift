import CAV

/// An opened media source: FFmpeg's demuxer over a local file, restricted to the allowed
/// demuxers and decoders and to the `file` protocol, with bounded probing, stoppable at the
/// rescue's deadline. Used on one thread; closes the file when released.
final class MediaInput {
  let av: Libav
  /// The demuxer's context (owned).
  let context: UnsafeMutablePointer<AVFormatContext>
  private let interrupt: MediaInterrupt

  /// Opens `path` and reads its stream parameters, refusing a file of more than
  /// `maximumTracks` tracks, or whose container declares a video frame of more than
  /// `maximumFramePixels`, before its streams are probed (probing decodes a frame of each).
  /// `format`: the demuxer to read it with (one name of ``MediaAllowlist/demuxers``), as a
  /// player told the file's type opens it; `nil`: the one whose probe of its bytes wins.
  /// - Throws: `deadline_exceeded`; `too_complex` for too many tracks; `too_many_pixels` for a
  ///   declared frame over the budget; otherwise a reason (for "Not rescued: …") when no allowed
  ///   demuxer reads the file or its streams cannot be read.
  init(
    path: String, av: Libav, interrupt: MediaInterrupt, maximumTracks: Int, maximumFramePixels: Int64,
    format: String? = nil
  ) throws(MediaFailure) {
    self.av = av
    self.interrupt = interrupt
    guard var context = av.avformat_alloc_context() else { throw .unrescued("out of memory") }
    context.pointee.interrupt_callback = interrupt.callback
    var options: OpaquePointer?
    defer { av.av_dict_free(&options) }
    _ = av.av_dict_set(&options, "format_whitelist", MediaAllowlist.demuxers, 0)
    _ = av.av_dict_set(&options, "protocol_whitelist", "file", 0)
    _ = av.av_dict_set(
      &options, "codec_whitelist", MediaAllowlist.decoders.sorted().joined(separator: ","), 0)
    _ = av.av_dict_set(&options, "probesize", "5000000", 0)  // bytes
    _ = av.av_dict_set(&options, "analyzeduration", "5000000", 0)  // microseconds
    // The demuxer itself stops at 256 tracks (FFmpeg's default is 1,000): past that the file is
    // not read at all; up to it, the track bound below refuses it with its count.
    _ = av.av_dict_set(&options, "max_streams", String(max(256, maximumTracks)), 0)
    var opened: UnsafeMutablePointer<AVFormatContext>? = context
    // "file:" so that no part of the name is read as a protocol.
    let forced = format.flatMap { av.av_find_input_format($0) }
    let code = av.avformat_open_input(&opened, "file:" + path, forced, &options)
    guard code >= 0, let opened else {
      try interrupt.checkFailure()
      throw .unrescued("FFmpeg cannot read it (\(av.message(code)))")
    }
    context = opened
    self.context = context
    let tracks = Int(context.pointee.nb_streams)
    if tracks > maximumTracks {
      throw .error(
        AttachmentError(
          .tooComplex, "The file has \(tracks) tracks, over the media rescue's limit of \(maximumTracks)."))
    }
    try Self.checkDeclaredSizes(context, maximumFramePixels: maximumFramePixels)
    // A stream whose container gives no size (an image piped through FFmpeg: a BMP) is sized by
    // decoding its first frame here: under the same budget, and checked again after.
    var probing = [OpaquePointer?](repeating: nil, count: tracks)
    for index in 0..<tracks {
      _ = av.av_dict_set(&probing[index], "max_pixels", String(maximumFramePixels), 0)
    }
    let found = probing.withUnsafeMutableBufferPointer {
      av.avformat_find_stream_info(context, $0.baseAddress)
    }
    for index in 0..<tracks { av.av_dict_free(&probing[index]) }
    try Self.checkDeclaredSizes(context, maximumFramePixels: maximumFramePixels)
    guard found >= 0 else {
      try interrupt.checkFailure()
      throw .unrescued("FFmpeg cannot read its streams (\(av.message(found)))")
    }
  }

  deinit {
    var context: UnsafeMutablePointer<AVFormatContext>? = context
    av.avformat_close_input(&context)
  }

  /// Refuses a video stream whose parameters declare frames over `maximumFramePixels`.
  private static func checkDeclaredSizes(
    _ context: UnsafeMutablePointer<AVFormatContext>, maximumFramePixels: Int64
  ) throws(MediaFailure) {
    for index in 0..<Int(context.pointee.nb_streams) {
      guard let parameters = context.pointee.streams[index]?.pointee.codecpar,
        parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO
      else { continue }
      let (width, height) = (Int64(parameters.pointee.width), Int64(parameters.pointee.height))
      if width * height > maximumFramePixels {
        throw .error(
          AttachmentError(
            .tooManyPixels,
            "The video declares frames of \(width)×\(height), over the rescue's budget of \(maximumFramePixels) pixels."
          ))
      }
    }
  }

  /// The stream at `index`.
  func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
    guard index >= 0, index < Int(context.pointee.nb_streams) else { return nil }
    return context.pointee.streams[index]
  }

  /// Tells the demuxer to drop every stream's packets but stream `index`'s.
  func discardAll(except index: Int) {
    for other in 0..<Int(context.pointee.nb_streams) where other != index {
      stream(other)?.pointee.discard = AVDISCARD_ALL
    }
  }

  /// The source's facts, from its stream parameters (nothing decoded).
  func source(bytes: Int64) -> MediaSource {
    let demuxer = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
    var duration = context.pointee.duration
    if duration == ak_av_nopts_value() || duration < 0 { duration = 0 }
    return MediaSource(
      demuxer: demuxer, durationSeconds: Double(duration) / Double(AV_TIME_BASE), bytes: bytes,
      video: best(AVMEDIA_TYPE_VIDEO), audio: best(AVMEDIA_TYPE_AUDIO))
  }

  /// The start of the presentation, in seconds (a transport stream often starts at 1.4 s).
  var startSeconds: Double {
    let start = context.pointee.start_time
    guard start != ak_av_nopts_value() else { return 0 }
    return Double(start) / Double(AV_TIME_BASE)
  }

  private func best(_ type: AVMediaType) -> MediaSource.Stream? {
    let index = Int(av.av_find_best_stream(context, type, -1, -1, nil, 0))
    guard let stream = stream(index), let parameters = stream.pointee.codecpar else { return nil }
    // Cover art is stored as a video stream of one picture: not a video.
    if type == AVMEDIA_TYPE_VIDEO, stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 {
      return nil
    }
    let decoder = av.avcodec_find_decoder(parameters.pointee.codec_id)
    let decoderName = decoder.map { String(cString: $0.pointee.name) }
    var facts = MediaSource.Stream(
      index: index, codec: av.name(of: parameters.pointee.codec_id),
      decodable: decoderName.map(MediaAllowlist.decoders.contains) ?? false)
    facts.width = Int(parameters.pointee.width)
    facts.height = Int(parameters.pointee.height)
    let rate = stream.pointee.avg_frame_rate
    facts.framesPerSecond = rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0
    facts.sampleRate = Int(parameters.pointee.sample_rate)
    facts.channels = Int(parameters.pointee.ch_layout.nb_channels)
    facts.bitrate = Int(clamping: max(0, parameters.pointee.bit_rate))
    return facts
  }

  /// Reads the next packet into `packet`; `false` at the end of the file.
  /// - Throws: `deadline_exceeded`, or a read error other than the end.
  func read(into packet: UnsafeMutablePointer<AVPacket>) throws(MediaFailure) -> Bool {
    try interrupt.checkFailure()
    let code = av.av_read_frame(context, packet)
    if code == ak_averror_eof() { return false }
    guard code >= 0 else {
      try interrupt.checkFailure()
      throw .unrescued("FFmpeg cannot read a packet (\(av.message(code)))")
    }
    return true
  }
}

/// Why a media rescue stopped: its deadline, or a reason the refusal keeps ("Not rescued: …"),
/// or an error of its own (a source over a budget).
enum MediaFailure: Error {
  /// The rescue cannot help; the original refusal stands, with this reason.
  case unrescued(String)
  /// An error to report as it is (`deadline_exceeded`, `too_long`, `too_many_pixels`, …).
  case error(AttachmentError)
}

extension MediaInterrupt {
  /// ``check()`` as a ``MediaFailure``.
  func checkFailure() throws(MediaFailure) {
    if hasFired { throw .error(Self.deadlineError) }
  }
}
