import CAV

/// One input stream decoded and encoded again: what the media engine feeds packets of a
/// transcoded stream to.
protocol StreamTranscoder: AnyObject {
  /// Feeds one packet of the input stream (its timestamps already shifted to start at 0);
  /// `nil` flushes everything to the writer.
  func feed(_ packet: UnsafeMutablePointer<AVPacket>?, into writer: MediaWriter) throws(MediaFailure)
  /// Whether the output has reached the plan's end (packets after it are not needed).
  var isComplete: Bool { get }
}

/// Video to H.264 (High, yuv420p) at the plan's size: decode, scale, encode with libx264.
final class VideoTranscoder: StreamTranscoder {
  private let av: Libav
  private let decoder: MediaDecoder
  private let encoder: MediaEncoder
  private let scaler: FrameScaler
  private let ownedScaled: OwnedFrame
  private var scaled: UnsafeMutablePointer<AVFrame> { ownedScaled.pointer }
  private let timeBase: AVRational
  private let frameSeconds: Double
  private let endSeconds: Double?
  /// The frame rate whose slots a frame's time is rounded to (``slot(of:)``).
  private let grid: AVRational
  /// The slot of the last frame encoded: a frame whose slot is not after it is dropped.
  private var lastSlot: Int64?
  private(set) var isComplete = false

  /// Opens the decoder of `stream` and an x264 encoder writing `width` × `height`.
  init(
    stream: UnsafeMutablePointer<AVStream>, width: Int, height: Int, bitrate: Int?, endSeconds: Double?,
    configuration: MediaRescueConfiguration, writer: MediaWriter, av: Libav
  ) throws(MediaFailure) {
    self.av = av
    decoder = try MediaDecoder(
      stream: stream, threads: configuration.threads, maximumPixels: configuration.maximumSourceFramePixels,
      av: av)
    encoder = try MediaEncoder(named: "libx264", av: av)
    scaler = try FrameScaler(width: Int32(width), height: Int32(height), format: AV_PIX_FMT_YUV420P, av: av)
    ownedScaled = try scaler.makeFrame()
    timeBase = stream.pointee.time_base
    let rate = stream.pointee.avg_frame_rate
    let fps = rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : 25
    frameSeconds = 1 / fps
    self.endSeconds = endSeconds
    grid = Self.grid(of: stream)
    let context = encoder.context
    context.pointee.width = Int32(width)
    context.pointee.height = Int32(height)
    context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
    context.pointee.time_base = timeBase
    context.pointee.framerate = rate.num > 0 ? rate : AVRational(num: 25, den: 1)
    context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
    context.pointee.thread_count = Int32(clamping: max(0, configuration.threads))
    var options = [("preset", configuration.videoPreset), ("profile", "high")]
    if let bitrate {
      context.pointee.bit_rate = Int64(bitrate)
      context.pointee.rc_max_rate = Int64(bitrate)
      context.pointee.rc_buffer_size = Int32(clamping: bitrate)
    } else {
      options.append(("crf", String(configuration.videoQuality)))
    }
    try encoder.open(options, globalHeader: writer.wantsGlobalHeader)
    encoder.streamIndex = try writer.addEncoded(by: context)
    try writer.keepOrientation(of: stream, on: encoder.streamIndex)
    let frameRate = context.pointee.framerate
    encoder.packetDuration = av.av_rescale_q(1, AVRational(num: frameRate.den, den: frameRate.num), timeBase)
  }

  func feed(_ packet: UnsafeMutablePointer<AVPacket>?, into writer: MediaWriter) throws(MediaFailure) {
    if !isComplete {
      try decoder.decode(packet) { (frame) throws(MediaFailure) in try self.encode(frame, into: writer) }
    }
    if packet == nil { try encoder.encode(nil, into: writer) }
  }

  private func encode(_ frame: UnsafeMutablePointer<AVFrame>, into writer: MediaWriter) throws(MediaFailure) {
    guard !isComplete else { return }
    var pts = frame.pointee.best_effort_timestamp
    if pts == ak_av_nopts_value() { pts = frame.pointee.pts }
    let seconds = pts == ak_av_nopts_value() ? 0 : Double(pts) * Double(timeBase.num) / Double(timeBase.den)
    if let endSeconds, seconds + frameSeconds > endSeconds + 0.0005 {
      isComplete = true
      return
    }
    // Frames go to the encoder in strictly increasing slots of the stream's frame rate, their
    // times on the slots: a frame a decoder gives back late or too close to the one before (an
    // ASF's irregular times) would otherwise be written with timestamps that go backwards, or
    // that a player reading the file at its frame rate sees go backwards (issue 52, item 4).
    // Such a frame is dropped; one without a time (MPEG-1's last reference, given back at the
    // flush) takes the slot after the last, in the order the decoder gives it.
    // av_rescale_q rounds to the nearest slot.
    let slot =
      pts == ak_av_nopts_value()
      ? (lastSlot ?? -1) + 1 : av.av_rescale_q(pts, timeBase, AVRational(num: grid.den, den: grid.num))
    if let lastSlot, slot <= lastSlot { return }
    lastSlot = slot
    pts = av.av_rescale_q(slot, AVRational(num: grid.den, den: grid.num), timeBase)
    if scaler.matches(frame) {
      // Already what the encoder takes: no copy through the scaler.
      frame.pointee.pts = pts
      frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
      try encoder.encode(frame, into: writer)
      return
    }
    try scaler.scale(frame, into: scaled)
    scaled.pointee.pts = pts
    try encoder.encode(scaled, into: writer)
  }

  /// The frame rate of `stream` frames are placed on: FFmpeg's real base rate (the lowest rate
  /// all its timestamps fit) when it is between 1 and 240 frames a second, else the average
  /// rate within those bounds, else 25.
  private static func grid(of stream: UnsafeMutablePointer<AVStream>) -> AVRational {
    for rate in [stream.pointee.r_frame_rate, stream.pointee.avg_frame_rate]
    where rate.num > 0 && rate.den > 0 {
      let fps = Double(rate.num) / Double(rate.den)
      if fps >= 1, fps <= 240 { return rate }
    }
    return AVRational(num: 25, den: 1)
  }
}

/// Audio to AAC-LC (44.1 or 48 kHz, mono or stereo): decode, resample, re-frame to the
/// encoder's 1024 samples, encode.
final class AudioTranscoder: StreamTranscoder {
  private let av: Libav
  private let decoder: MediaDecoder
  private let encoder: MediaEncoder
  private let ownedResampler: OwnedResampler
  private var resampler: OpaquePointer? { ownedResampler.pointer }
  private let ownedFifo: OwnedAudioFifo
  private var fifo: OpaquePointer { ownedFifo.pointer }
  private let ownedConverted: OwnedFrame
  private var converted: UnsafeMutablePointer<AVFrame> { ownedConverted.pointer }
  private let ownedChunk: OwnedFrame
  private var chunk: UnsafeMutablePointer<AVFrame> { ownedChunk.pointer }
  private var samplesWritten: Int64 = 0
  private let sampleLimit: Int64?
  private(set) var isComplete = false

  /// Opens the decoder of `stream` and an AAC encoder at `bitrate` bits per second.
  init(
    stream: UnsafeMutablePointer<AVStream>, bitrate: Int, endSeconds: Double?,
    configuration: MediaRescueConfiguration, writer: MediaWriter, av: Libav
  ) throws(MediaFailure) {
    self.av = av
    decoder = try MediaDecoder(
      stream: stream, threads: 1, maximumPixels: configuration.maximumSourceFramePixels, av: av)
    encoder = try MediaEncoder(named: "aac", av: av)
    let input = decoder.context
    let rate: Int32 = input.pointee.sample_rate == 44_100 ? 44_100 : 48_000
    let channels = min(2, max(1, input.pointee.ch_layout.nb_channels))
    let context = encoder.context
    context.pointee.sample_rate = rate
    context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
    context.pointee.bit_rate = Int64(bitrate)
    context.pointee.time_base = AVRational(num: 1, den: rate)
    av.av_channel_layout_default(&context.pointee.ch_layout, channels)
    try encoder.open([], globalHeader: writer.wantsGlobalHeader)
    encoder.streamIndex = try writer.addEncoded(by: context)
    sampleLimit = endSeconds.map { Int64($0 * Double(rate)) }
    // A layout of unknown order (ADPCM, some PCM) is read as the default one for its count.
    var inputLayout = AVChannelLayout()
    defer { av.av_channel_layout_uninit(&inputLayout) }
    if input.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
      av.av_channel_layout_default(&inputLayout, max(1, input.pointee.ch_layout.nb_channels))
    } else {
      _ = av.av_channel_layout_copy(&inputLayout, &input.pointee.ch_layout)
    }
    // Owned from here: a throw below frees it with the rest of what was made.
    let resampler = OwnedResampler(av: av)
    guard
      av.swr_alloc_set_opts2(
        &resampler.pointer, &context.pointee.ch_layout, AV_SAMPLE_FMT_FLTP, rate, &inputLayout,
        input.pointee.sample_fmt, input.pointee.sample_rate, 0, nil) >= 0
    else { throw .unrescued("FFmpeg cannot set up resampling from \(input.pointee.sample_fmt.rawValue)") }
    let initialised = av.swr_init(resampler.pointer)
    guard initialised >= 0 else {
      throw .unrescued("FFmpeg cannot resample its audio (\(av.message(initialised)))")
    }
    ownedResampler = resampler
    ownedFifo = try OwnedAudioFifo(format: AV_SAMPLE_FMT_FLTP, channels: channels, av: av)
    ownedConverted = try OwnedFrame(av: av)
    ownedChunk = try OwnedFrame(av: av)
  }

  func feed(_ packet: UnsafeMutablePointer<AVPacket>?, into writer: MediaWriter) throws(MediaFailure) {
    if !isComplete {
      try decoder.decode(packet) { (frame) throws(MediaFailure) in try self.resample(frame, into: writer) }
    }
    guard packet == nil else { return }
    if !isComplete { try resample(nil, into: writer) }
    try drain(into: writer, flushing: true)
    try encoder.encode(nil, into: writer)
  }

  private func resample(_ frame: UnsafeMutablePointer<AVFrame>?, into writer: MediaWriter)
    throws(MediaFailure)
  {
    let context = encoder.context
    av.av_frame_unref(converted)
    converted.pointee.sample_rate = context.pointee.sample_rate
    converted.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
    _ = av.av_channel_layout_copy(&converted.pointee.ch_layout, &context.pointee.ch_layout)
    if let frame, frame.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
      // As the resampler was set up: the default layout for the count.
      let count = max(1, frame.pointee.ch_layout.nb_channels)
      av.av_channel_layout_uninit(&frame.pointee.ch_layout)
      av.av_channel_layout_default(&frame.pointee.ch_layout, count)
    }
    let code = av.swr_convert_frame(resampler, converted, frame)
    guard code >= 0 else { throw .unrescued("FFmpeg cannot resample its audio (\(av.message(code)))") }
    if converted.pointee.nb_samples > 0 {
      let data = UnsafeMutableRawPointer(converted.pointee.extended_data)
        .assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
      guard av.av_audio_fifo_write(fifo, data, converted.pointee.nb_samples) >= 0 else {
        throw .unrescued("out of memory")
      }
    }
    try drain(into: writer, flushing: false)
  }

  /// Encodes whole encoder frames from the FIFO (and, when flushing, the last short one), up
  /// to the plan's end.
  private func drain(into writer: MediaWriter, flushing: Bool) throws(MediaFailure) {
    let context = encoder.context
    let size = max(1, context.pointee.frame_size)
    while !isComplete {
      let available = av.av_audio_fifo_size(fifo)
      guard available >= size || (flushing && available > 0) else { return }
      var count = min(size, available)
      if let sampleLimit {
        let left = sampleLimit - samplesWritten
        if left < Int64(count) { count = Int32(max(0, left)) }
        if count == 0 {
          isComplete = true
          return
        }
      }
      av.av_frame_unref(chunk)
      chunk.pointee.nb_samples = count
      chunk.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
      chunk.pointee.sample_rate = context.pointee.sample_rate
      _ = av.av_channel_layout_copy(&chunk.pointee.ch_layout, &context.pointee.ch_layout)
      guard av.av_frame_get_buffer(chunk, 0) >= 0 else { throw .unrescued("out of memory") }
      let data = UnsafeMutableRawPointer(chunk.pointee.extended_data)
        .assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
      _ = av.av_audio_fifo_read(fifo, data, count)
      chunk.pointee.pts = samplesWritten
      samplesWritten += Int64(count)
      try encoder.encode(chunk, into: writer)
    }
  }
}
