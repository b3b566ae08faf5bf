import CAV
import Glibc

/// The worker's side of ``PosterRescuer``: FFmpeg in this process decodes the video's frames
/// from the start (damaged ones skipped: error concealment off), scales each into the poster's
/// box as full-range YUV 4:2:0, keeps the first whose mean luma is over
/// ``PosterConfiguration/darkLuma`` (else the brightest of the first
/// ``PosterConfiguration/maximumDecodedFrames``), turns it upright (``PosterOrientation``), and
/// encodes it as a baseline JPEG. An image sequence (an AVIF or HEIF sequence) is first made
/// into an animated GIF (``SequenceAnimation``), within its own budget; the still is what it
/// falls back to.
struct PosterMaker {
  /// The poster's settings.
  let configuration: PosterConfiguration

  /// FFmpeg's libraries, for a job whose source is within the poster's source byte limit.
  /// - Throws: `too_large` over that limit; the job's refusal when the libraries are missing.
  func libraries(for job: RescueJob) throws(AttachmentError) -> Libav {
    if job.bytes > configuration.source.maximumSourceBytes {
      throw AttachmentError(
        .tooLarge,
        "The source is \(job.bytes) bytes, over the poster's source limit of \(configuration.source.maximumSourceBytes)."
      )
    }
    guard let av = Libav.shared else {
      throw job.refusal.notRescued("FFmpeg's libraries (libavformat59, libavcodec59) are not installed")
    }
    return av
  }

  /// Makes the poster of `job.source` into `job.output`.
  /// - Throws: `too_large` or `too_long` for a source over the shared source limits; the
  ///   refusal with why ("it has no video stream", "no frame of it decodes cleanly");
  ///   `too_many_pixels`; `deadline_exceeded`.
  func make(_ job: RescueJob) throws(AttachmentError) -> Rescue {
    let limits = configuration.source
    let av = try libraries(for: job)
    try Self.checkBitmapSize(job, maximumPixels: limits.maximumSourceFramePixels)
    let interrupt = MediaInterrupt(deadline: job.deadline)
    do throws(MediaFailure) {
      let input = try MediaInput(
        path: job.source, av: av, interrupt: interrupt, maximumTracks: limits.maximumSourceTracks,
        maximumFramePixels: limits.maximumSourceFramePixels)
      let source = input.source(bytes: job.bytes)
      try Self.checkDuration(source, maximumSeconds: limits.maximumSourceSeconds)
      guard let video = source.video, var stream = input.stream(video.index) else {
        throw MediaFailure.unrescued("it has no video stream")
      }
      var actions: [Rescue.Action] = [.poster]
      var still = input
      if job.refusal.isImageSequence {
        if try animate(input, stream: stream, index: video.index, job: job, av: av, interrupt: interrupt) {
          actions = [.converted]
        } else {
          // Declined part-way: the still starts again from the first packet.
          still = try MediaInput(
            path: job.source, av: av, interrupt: interrupt, maximumTracks: limits.maximumSourceTracks,
            maximumFramePixels: limits.maximumSourceFramePixels)
          guard let again = still.stream(video.index) else {
            throw MediaFailure.unrescued("it has no video stream")
          }
          stream = again
        }
      }
      if actions == [.poster] {
        // The search for a bright frame ends at 60 % of the time left: the rest encodes the best.
        let searchEnd = job.deadline.map {
          ContinuousClock.now + (ContinuousClock.now.duration(to: $0) * 0.6)
        }
        let frame = try pick(
          from: still, stream: stream, index: video.index, av: av, interrupt: interrupt, searchEnd: searchEnd
        ).frame
        try write(PosterOrientation(of: stream, av: av).apply(to: frame, av: av), to: job.output, av: av)
        // A still image FFmpeg reads (a BMP) is converted, not a poster of something else.
        if job.refusal.isImageSequence, stream.pointee.nb_frames <= 1 {
          let shrunk =
            Int(frame.pointer.pointee.width) < video.width || Int(frame.pointer.pointee.height) < video.height
          actions = shrunk ? [.converted, .downscaled] : [.converted]
        }
      }
      return Self.provenance(job, source: source, video: video, actions: actions)
    } catch {
      switch error {
      case .unrescued(let reason):
        if interrupt.hasFired { throw MediaInterrupt.deadlineError }
        throw job.refusal.notRescued("no poster either: \(reason)")
      case .error(let reported): throw reported
      }
    }
  }

  /// What a poster job did, and the source it did it to.
  private static func provenance(
    _ job: RescueJob, source: MediaSource, video: MediaSource.Stream, actions: [Rescue.Action]
  ) -> Rescue {
    Rescue(
      rescuer: PosterRescuer.name, from: job.refusal.format ?? MediaType.mp4.mime, actions: actions,
      originalBytes: job.bytes, originalWidth: video.width, originalHeight: video.height,
      originalDurationSeconds: source.durationSeconds.isFinite && source.durationSeconds > 0
        ? source.durationSeconds : nil,
      originalCodecs: source.codecs)
  }

  /// Refuses a bitmap (BMP) whose header states more pixels than `maximumPixels`, before
  /// anything decodes it.
  /// - Throws: `too_many_pixels`.
  private static func checkBitmapSize(_ job: RescueJob, maximumPixels: Int64) throws(AttachmentError) {
    guard job.refusal.format == ForeignFormat.bmp.mime, let size = BitmapHeader.size(of: job.source) else {
      return
    }
    let (pixels, overflow) = size.width.multipliedReportingOverflow(by: size.height)
    if overflow || pixels > maximumPixels {
      throw AttachmentError(
        .tooManyPixels,
        "The bitmap is \(size.width)×\(size.height), over the rescue's budget of \(maximumPixels) pixels: not decoded."
      )
    }
  }

  /// Refuses a source whose stated duration is over `maximumSeconds`.
  /// - Throws: `too_long`.
  private static func checkDuration(_ source: MediaSource, maximumSeconds: Double) throws(MediaFailure) {
    if source.durationSeconds.isFinite, source.durationSeconds > maximumSeconds {
      throw MediaFailure.error(
        AttachmentError(
          .tooLong,
          "The source is \(source.durationSeconds) s long, over the poster's source limit of \(maximumSeconds) s."
        ))
    }
  }

  /// Tries an image sequence's animated GIF (``SequenceAnimation``) into `job.output`, until
  /// ``PosterConfiguration/maximumSeconds`` (or 40 %) before the deadline, which the still it
  /// falls back to keeps. Returns whether the animation was written.
  private func animate(
    _ input: MediaInput, stream: UnsafeMutablePointer<AVStream>, index: Int, job: RescueJob, av: Libav,
    interrupt: MediaInterrupt
  ) throws(MediaFailure) -> Bool {
    let end = job.deadline.map { deadline in
      let left = ContinuousClock.now.duration(to: deadline)
      let forStill = min(left * 0.4, .nanoseconds(Int64(max(0, configuration.maximumSeconds) * 1e9)))
      return deadline - forStill
    }
    let frames = try SequenceAnimation(configuration: configuration).make(
      from: input, stream: stream, index: index, av: av, interrupt: interrupt, until: end, to: job.output)
    return frames != nil
  }

  /// The poster's size: the stream's display size (its sample aspect applied) scaled down into
  /// a square of ``PosterConfiguration/maximumEdge``, in whole pixels (at least 2).
  static func size(
    width: Int32, height: Int32, sampleAspect: AVRational, maximumEdge: Int
  ) -> (width: Int32, height: Int32) {
    var displayWidth = Double(max(1, width))
    let displayHeight = Double(max(1, height))
    if sampleAspect.num > 0, sampleAspect.den > 0 {
      displayWidth *= Double(sampleAspect.num) / Double(sampleAspect.den)
    }
    let edge = Double(max(16, maximumEdge))
    let scale = min(1, edge / max(displayWidth, displayHeight))
    // Whole pixels, at least 2: a JPEG needs no even size (an odd bitmap keeps its own).
    func pixels(_ value: Double) -> Int32 { Int32(max(2, (value * scale).rounded())) }
    return (pixels(displayWidth), pixels(displayHeight))
  }

  /// The mean luma (0–255) of a full-range frame, read from every fourth pixel of every fourth
  /// row.
  static func meanLuma(_ frame: UnsafeMutablePointer<AVFrame>) -> Int {
    guard let plane = frame.pointee.data.0 else { return 0 }
    let stride = Int(frame.pointee.linesize.0)
    var sum = 0
    var count = 0
    for row in Swift.stride(from: 0, to: Int(frame.pointee.height), by: 4) {
      for column in Swift.stride(from: 0, to: Int(frame.pointee.width), by: 4) {
        sum += Int(plane[row * stride + column])
        count += 1
      }
    }
    return count == 0 ? 0 : sum / count
  }

  /// The frame ``pick(from:stream:index:av:interrupt:searchEnd:window:)`` chose: the scaled
  /// still, its time in seconds from the stream's start (`nil` when the frame has no time stamp),
  /// and whether it is bright enough (mean luma at least ``PosterConfiguration/darkLuma``).
  struct Pick {
    var frame: OwnedFrame
    var seconds: Double?
    var isBright: Bool
  }

  /// Decodes frames of stream `index` until one is bright enough, the frame budget (or twice as
  /// many packets) is spent, `searchEnd` passes with a frame in hand, or (with a `window`, in
  /// seconds of the video) a frame comes past the window: the brightest frame so far is the pick.
  func pick(
    from input: MediaInput, stream: UnsafeMutablePointer<AVStream>, index: Int, av: Libav,
    interrupt: MediaInterrupt, searchEnd: ContinuousClock.Instant?, window: Double? = nil
  ) throws(MediaFailure) -> Pick {
    input.discardAll(except: index)
    let decoder = try MediaDecoder(
      stream: stream, threads: 1, maximumPixels: configuration.source.maximumSourceFramePixels, av: av,
      strict: true)
    let parameters = stream.pointee.codecpar
    let size = Self.size(
      width: parameters?.pointee.width ?? 0, height: parameters?.pointee.height ?? 0,
      sampleAspect: stream.pointee.sample_aspect_ratio.num > 0
        ? stream.pointee.sample_aspect_ratio
        : parameters?.pointee.sample_aspect_ratio ?? AVRational(num: 0, den: 1),
      maximumEdge: configuration.maximumEdge)
    let scaler = try FrameScaler(width: size.width, height: size.height, format: AV_PIX_FMT_YUVJ420P, av: av)
    var search = try FrameSearch(
      scaler: scaler, stream: stream, window: window, darkLuma: configuration.darkLuma,
      maximumDecodedFrames: configuration.maximumDecodedFrames)
    // Packets read, bounded too: a stream whose every packet is damaged gives no frame.
    var fed = 0
    let packet = try OwnedPacket(av: av)
    while !search.isOver {
      if search.best != nil, let searchEnd, ContinuousClock.now >= searchEnd { break }
      try interrupt.checkFailure()
      guard try input.read(into: packet.pointer) else {
        // The frames the decoder still holds.
        try decoder.decode(nil) { frame throws(MediaFailure) in try search.take(frame) }
        break
      }
      defer { av.av_packet_unref(packet.pointer) }
      guard Int(packet.pointer.pointee.stream_index) == index else { continue }
      fed += 1
      if fed > 2 * configuration.maximumDecodedFrames { break }
      try decoder.decode(packet.pointer) { frame throws(MediaFailure) in try search.take(frame) }
    }
    guard let best = search.best else {
      // An image piped through FFmpeg (a BMP) states its size only in its frame, which the
      // decoder refuses unallocated when it is over the budget: either may be why.
      guard (parameters?.pointee.width ?? 0) > 0 else {
        throw .unrescued(
          "no frame of it decodes cleanly within the budget of \(configuration.source.maximumSourceFramePixels) pixels a frame"
        )
      }
      throw .unrescued("no frame of it decodes cleanly")
    }
    return Pick(frame: best, seconds: search.bestSeconds, isBright: search.found)
  }

  /// Encodes `still` as a baseline JPEG (FFmpeg's MJPEG encoder, quantizer 3: about libjpeg's
  /// quality 90) into `path`.
  private func write(_ still: OwnedFrame, to path: String, av: Libav) throws(MediaFailure) {
    let encoder = try MediaEncoder(named: "mjpeg", av: av)
    let context = encoder.context
    context.pointee.width = still.pointer.pointee.width
    context.pointee.height = still.pointer.pointee.height
    context.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
    context.pointee.time_base = AVRational(num: 1, den: 25)
    context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
    context.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE) | Int32(AV_CODEC_FLAG_BITEXACT)
    context.pointee.global_quality = 3 * FF_QP2LAMBDA
    try encoder.open([], globalHeader: false)
    still.pointer.pointee.quality = context.pointee.global_quality
    still.pointer.pointee.pts = 0
    var bytes: [UInt8] = []
    let collect = { (packet: UnsafeMutablePointer<AVPacket>) throws(MediaFailure) in
      guard let data = packet.pointee.data, packet.pointee.size > 0 else { return }
      bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }
    try encoder.encode(still.pointer, collect)
    try encoder.encode(nil, collect)
    guard !bytes.isEmpty else { throw .unrescued("its poster does not encode") }
    let file = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    guard file >= 0 else { throw .error(AttachmentError(.ioError, "Cannot write the poster.")) }
    defer { close(file) }
    var offset = 0
    while offset < bytes.count {
      let wrote = bytes[offset...].withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
      if wrote < 0, errno == EINTR { continue }
      guard wrote > 0 else { throw .error(AttachmentError(.ioError, "Cannot write the poster.")) }
      offset += wrote
    }
  }
}
