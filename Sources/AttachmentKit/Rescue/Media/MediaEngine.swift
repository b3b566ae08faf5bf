import CAV
import Glibc

/// Runs one media rescue with FFmpeg: opens the source, checks its declared budgets, plans,
/// finds the keyframe cut of a copied trim, and writes the delivered file. On one thread,
/// stoppable at the job's deadline (``MediaInterrupt``).
struct MediaEngine {
  let av: Libav
  let configuration: MediaRescueConfiguration

  /// What the rescue did and what the source was.
  struct Outcome {
    var plan: MediaPlan
    var source: MediaSource
  }

  /// Rescues `job.source` into `job.output`.
  func run(_ job: RescueJob, interrupt: MediaInterrupt) throws(MediaFailure) -> Outcome {
    var input = try openSource(job, interrupt: interrupt)
    let source = input.source(bytes: job.bytes)
    try checkBudgets(source)
    var plan = try MediaPlan.make(
      for: source, refusal: job.refusal, limits: job.limits, configuration: configuration
    ).get()
    if plan.video == .copy, let end = plan.endSeconds, let video = source.video {
      if let cut = try keyframeCut(input, video: video.index, end: end) {
        plan.endSeconds = cut
      } else {
        // One group of pictures spans the limit: only re-encoding can cut it.
        let (width, height) = MediaPlan.fit(video, configuration: configuration)
        plan.video = .transcode(width: width, height: height, bitrate: nil)
        plan.actions = [.trimmed, .transcoded]
      }
      // read again from the start
      input = try openSource(job, interrupt: interrupt)
    }
    try admit(plan, source: source, job: job)
    if try write(plan, from: input, source: source, to: job.output, interrupt: interrupt) == .hidesFrames,
      let video = source.video
    {
      // The copied video has packets its source hides (an edit list: decoded, never shown); a
      // copy would show them, out of order and past the end (issue 52, item 4). Re-encoding
      // decodes them as the source does and drops their frames.
      let (width, height) = MediaPlan.fit(video, configuration: configuration)
      plan.video = .transcode(width: width, height: height, bitrate: nil)
      plan.actions = plan.actions.filter { $0 != .rewrapped } + [.transcoded]
      input = try openSource(job, interrupt: interrupt)
      try admit(plan, source: source, job: job)
      guard try write(plan, from: input, source: source, to: job.output, interrupt: interrupt) == .written
      else { throw .unrescued("its video hides frames that a copy would show") }
    }
    // A shrink that landed over the limit (x264's rate control overshoots short clips): once
    // more, at the bitrate that the bytes it wrote say fits.
    if let retry = secondShrink(plan, source: source, output: job.output, limit: job.limits.maximumVideoBytes)
    {
      plan = retry
      input = try openSource(job, interrupt: interrupt)
      guard try write(plan, from: input, source: source, to: job.output, interrupt: interrupt) == .written
      else { throw .unrescued("its video hides frames that a copy would show") }
    }
    return Outcome(plan: plan, source: source)
  }

  /// Opens the job's source, from its start, within the configuration's track and frame bounds.
  private func openSource(_ job: RescueJob, interrupt: MediaInterrupt) throws(MediaFailure) -> MediaInput {
    try MediaInput(
      path: job.source, av: av, interrupt: interrupt, maximumTracks: configuration.maximumSourceTracks,
      maximumFramePixels: configuration.maximumSourceFramePixels)
  }

  /// The plan of a second shrink when the first one's output (`output`) is over `limit` bytes:
  /// the video bitrate scaled by the room the audio leaves over what the video took, less 3 %.
  /// `nil` when the plan does not shrink, the output fits, or the bitrate would fall under
  /// ``MediaPlan/minimumVideoBitrate``.
  private func secondShrink(_ plan: MediaPlan, source: MediaSource, output: String, limit: Int64)
    -> MediaPlan?
  {
    guard case .transcode(let width, let height, let bitrate?) = plan.video else { return nil }
    var written = stat()
    guard stat(output, &written) == 0, Int64(written.st_size) > limit else { return nil }
    let seconds = plan.endSeconds ?? source.durationSeconds
    let audioRate: Int
    switch plan.audio {
    case .transcode(let rate): audioRate = rate
    case .copy: audioRate = source.audio?.bitrate ?? 0
    case nil: audioRate = 0
    }
    let audioBytes = Double(audioRate) * seconds / 8
    let videoBytes = max(1, Double(written.st_size) - audioBytes)
    let room = Double(limit) * 0.97 - audioBytes
    let next = Int(Double(bitrate) * room / videoBytes)
    guard next >= MediaPlan.minimumVideoBitrate else { return nil }
    var retry = plan
    retry.video = .transcode(width: width, height: height, bitrate: next)
    return retry
  }

  /// Refuses, from the declared parameters alone, a source whose decoding would cost more than
  /// the configuration allows.
  private func checkBudgets(_ source: MediaSource) throws(MediaFailure) {
    if source.durationSeconds > configuration.maximumSourceSeconds {
      throw .error(
        AttachmentError(
          .tooLong,
          "The source declares \(source.durationSeconds) s, over the rescue's source limit of \(configuration.maximumSourceSeconds) s."
        ))
    }
    if let video = source.video {
      let (pixels, overflow) = Int64(video.width).multipliedReportingOverflow(by: Int64(video.height))
      if overflow || pixels > configuration.maximumSourceFramePixels {
        throw .error(
          AttachmentError(
            .tooManyPixels,
            "The video's frames are \(video.width)×\(video.height), over the rescue's budget of \(configuration.maximumSourceFramePixels) pixels."
          ))
      }
      let frames = video.framesPerSecond * source.durationSeconds
      if !frames.isFinite || frames > Double(configuration.maximumSourceFrames) {
        throw .error(
          AttachmentError(
            .tooManyPixels,
            "The video declares \(Int(min(frames, 1e15))) frames, over the rescue's budget of \(configuration.maximumSourceFrames)."
          ))
      }
    }
    if let audio = source.audio, audio.sampleRate > 384_000 || audio.channels > 16 {
      throw .unrescued("its audio declares \(audio.sampleRate) Hz and \(audio.channels) channels")
    }
  }

  /// Refuses, before a frame is decoded, a transcode whose estimate does not fit the time left
  /// (``MediaRescueConfiguration/transcodeAdmission``); copies and re-wraps always pass.
  private func admit(_ plan: MediaPlan, source: MediaSource, job: RescueJob) throws(MediaFailure) {
    guard case .whenEstimateFits(let reserve) = configuration.transcodeAdmission, let deadline = job.deadline,
      let estimate = TranscodeEstimate(
        plan: plan, source: source, limits: job.limits, cost: configuration.transcodeCost)
    else { return }
    let left = (ContinuousClock.now.duration(to: deadline) - reserve).inSeconds
    if estimate.seconds > left { throw .unrescued(estimate.reason(left: left)) }
  }

  /// The time of the last keyframe of `video` at or before `end` seconds (after the start),
  /// past the first: where a stream copy can cut and stay within `end`. `nil` when there is none.
  private func keyframeCut(_ input: MediaInput, video: Int, end: Double) throws(MediaFailure) -> Double? {
    let owned = try OwnedPacket(av: av)
    defer { withExtendedLifetime(owned) {} }  // freed at the end of the function, not after its last use
    let packet = owned.pointer
    let start = input.startSeconds
    var cut: Double?
    while try input.read(into: packet) {
      defer { av.av_packet_unref(packet) }
      guard Int(packet.pointee.stream_index) == video, packet.pointee.flags & AV_PKT_FLAG_KEY != 0,
        let stream = input.stream(video), packet.pointee.pts != ak_av_nopts_value()
      else { continue }
      let seconds = Self.seconds(packet.pointee.pts, stream.pointee.time_base) - start
      if seconds > end + Self.epsilon { break }
      if seconds > Self.epsilon { cut = seconds }
    }
    return cut
  }

  /// How a packet of an input stream reaches the writer.
  private enum Route {
    case copy(output: Int32, timeBase: AVRational, isVideo: Bool, check: CopyCheck)
    case transcode(any StreamTranscoder)
  }

  /// How a write ended.
  enum Written: Equatable {
    /// The file is complete.
    case written
    /// A copied video stream has a packet its source hides (`AV_PKT_FLAG_DISCARD`, from an
    /// edit list); nothing usable was written: the video must be re-encoded.
    case hidesFrames
  }

  /// Writes the plan's output from `input`; ``Written/hidesFrames`` when a copy cannot be made.
  private func write(
    _ plan: MediaPlan, from input: MediaInput, source: MediaSource, to path: String, interrupt: MediaInterrupt
  ) throws(MediaFailure) -> Written {
    let writer = try MediaWriter(path: path, output: plan.output, av: av, interrupt: interrupt)
    var routes: [Int: Route] = [:]
    if let step = plan.video, let video = source.video, let stream = input.stream(video.index) {
      routes[video.index] = try route(step: step, stream: stream, plan: plan, writer: writer)
    }
    if let step = plan.audio, let audio = source.audio, let stream = input.stream(audio.index) {
      routes[audio.index] = try route(step: step, stream: stream, plan: plan, writer: writer)
    }
    guard !routes.isEmpty else { throw .unrescued("no stream can be delivered") }
    try writer.start()
    guard
      case .reached(let reached) = try copyPackets(
        input, routes: routes, end: plan.endSeconds, writer: writer)
    else { return .hidesFrames }
    // A source that ends well before the duration it declares is cut short: its refusal stands.
    let expected = min(plan.endSeconds ?? .infinity, source.durationSeconds)
    if let reached, expected.isFinite, reached < expected * 0.9 - 0.05 {
      throw .unrescued(
        "it is cut short: its streams end at \(Self.rounded(reached)) s of the \(Self.rounded(expected)) s it declares"
      )
    }
    for case .copy(_, _, _, let check) in routes.values { try check.finish() }
    for case .transcode(let transcoder) in routes.values { try transcoder.feed(nil, into: writer) }
    try writer.finish()
    return .written
  }

  private func route(
    step: MediaPlan.Video, stream: UnsafeMutablePointer<AVStream>, plan: MediaPlan, writer: MediaWriter
  ) throws(MediaFailure) -> Route {
    switch step {
    case .copy:
      let output = try writer.addCopy(of: stream.pointee.codecpar, timeBase: stream.pointee.time_base)
      try writer.keepOrientation(of: stream, on: output)
      return .copy(
        output: output, timeBase: stream.pointee.time_base, isVideo: true,
        check: try CopyCheck(
          stream: stream, isVideo: true, threads: configuration.threads,
          maximumPixels: configuration.maximumSourceFramePixels, av: av))
    case .transcode(let width, let height, let bitrate):
      return .transcode(
        try VideoTranscoder(
          stream: stream, width: width, height: height, bitrate: bitrate, endSeconds: plan.endSeconds,
          configuration: configuration, writer: writer, av: av))
    }
  }

  private func route(
    step: MediaPlan.Audio, stream: UnsafeMutablePointer<AVStream>, plan: MediaPlan, writer: MediaWriter
  ) throws(MediaFailure) -> Route {
    switch step {
    case .copy:
      return .copy(
        output: try writer.addCopy(of: stream.pointee.codecpar, timeBase: stream.pointee.time_base),
        timeBase: stream.pointee.time_base, isVideo: false,
        check: try CopyCheck(
          stream: stream, isVideo: false, threads: 1, maximumPixels: configuration.maximumSourceFramePixels,
          av: av))
    case .transcode(let bitrate):
      return .transcode(
        try AudioTranscoder(
          stream: stream, bitrate: bitrate, endSeconds: plan.endSeconds, configuration: configuration,
          writer: writer, av: av))
    }
  }

  /// How the packets of a write were read.
  private enum Copied {
    /// Where the routed streams' packets ended, in seconds, when the whole file was read;
    /// `nil` when reading stopped at the plan's end.
    case reached(Double?)
    /// A copied video packet is one its source hides (``Written/hidesFrames``).
    case hidesFrames
  }

  /// Reads every packet, shifts it to start at 0, and routes it: copied (when it ends by the
  /// plan's end) or fed to its transcoder. Stops once nothing more is needed, or at a copied
  /// video packet the source hides (`AV_PKT_FLAG_DISCARD`: a copy would show it).
  private func copyPackets(
    _ input: MediaInput, routes: [Int: Route], end: Double?, writer: MediaWriter
  ) throws(MediaFailure) -> Copied {
    let owned = try OwnedPacket(av: av)
    defer { withExtendedLifetime(owned) {} }  // freed at the end of the function, not after its last use
    let packet = owned.pointer
    let start = input.context.pointee.start_time == ak_av_nopts_value() ? 0 : input.context.pointee.start_time
    var passedEnd = Set<Int>()
    var reached = 0.0
    // A stream's last packet start and the step to it: the length of a packet that states none
    // (FLV's audio), so that a stream is not taken to end a packet early.
    var lastStart: [Int: Int64] = [:]
    var step: [Int: Int64] = [:]
    while passedEnd.count < routes.count {
      guard try input.read(into: packet) else { return .reached(reached) }
      defer { av.av_packet_unref(packet) }
      let index = Int(packet.pointee.stream_index)
      guard let route = routes[index], let stream = input.stream(index) else { continue }
      let timeBase = stream.pointee.time_base
      let offset = av.av_rescale_q(start, AVRational(num: 1, den: Int32(AV_TIME_BASE)), timeBase)
      if packet.pointee.pts != ak_av_nopts_value() { packet.pointee.pts -= offset }
      if packet.pointee.dts != ak_av_nopts_value() { packet.pointee.dts -= offset }
      if packet.pointee.pts != ak_av_nopts_value() {
        let pts = packet.pointee.pts
        if let last = lastStart[index], pts > last { step[index] = pts - last }
        lastStart[index] = pts
        let length = packet.pointee.duration > 0 ? packet.pointee.duration : step[index] ?? 0
        reached = max(reached, Self.seconds(pts + length, timeBase))
      }
      switch route {
      case .copy(let output, let timeBase, let isVideo, let check):
        if isVideo, passedEnd.contains(index) { continue }
        if let end, packet.pointee.pts != ak_av_nopts_value() {
          let begins = Self.seconds(packet.pointee.pts, timeBase)
          let ends = begins + Self.seconds(packet.pointee.duration, timeBase)
          if isVideo, begins >= end - Self.epsilon {
            // The keyframe at the cut: no later video packet is copied, not even one shown
            // before it (an open GOP's leading pictures are predicted from that keyframe, and
            // decode wrongly without it, silently: FFmpeg reports no error).
            passedEnd.insert(index)
            continue
          }
          if !isVideo, ends > end + Self.epsilon {
            // Interleaving runs ahead of presentation by a few frames at most.
            if begins > end + 1 { passedEnd.insert(index) }
            continue
          }
        }
        if isVideo, packet.pointee.flags & AV_PKT_FLAG_DISCARD != 0 { return .hidesFrames }
        try check.feed(packet)
        try writer.write(packet, stream: output, from: timeBase)
      case .transcode(let transcoder):
        try transcoder.feed(packet, into: writer)
        if transcoder.isComplete { passedEnd.insert(index) }
      }
    }
    return .reached(nil)
  }

  private static func rounded(_ seconds: Double) -> String {
    String(Double((seconds * 100).rounded()) / 100)
  }

  /// Timestamps within this of a limit count as on it (half a millisecond).
  static let epsilon = 0.0005

  static func seconds(_ value: Int64, _ timeBase: AVRational) -> Double {
    guard timeBase.den != 0 else { return 0 }
    return Double(value) * Double(timeBase.num) / Double(timeBase.den)
  }
}
