import CAV

/// The worker's side of the decode check (``DecodeCheckConfiguration``): opens an accepted
/// file with FFmpeg's demuxer of its type, as a player told its type opens it, and decodes the
/// first ``DecodeCheckConfiguration/seconds`` of each stream it plays (the best video stream,
/// cover art aside, and the best audio stream) with a ``CopyCheck`` each, whose judgement
/// ``CopyCheck/Judgement/starts`` refuses a stream that does not start. An audio file's cover art
/// must have a picture size FFmpeg reads (without one, `ffmpeg` itself cannot start the file);
/// damage inside it is not judged (the audio plays). On one thread (the checks decode on theirs),
/// stoppable at the job's deadline (``MediaInterrupt``).
struct DecodeStart {
  let configuration: DecodeCheckConfiguration

  /// The most packets read before the check ends whatever their times (a stream whose packets
  /// carry no time stamp).
  static let maximumPackets = 5_000

  /// Checks `job.source`, whose ``Refusal/category`` and ``Refusal/type`` say what it was
  /// accepted as.
  /// - Returns: an empty reply when every stream it plays starts; ``WorkerReply/unchecked``
  ///   when FFmpeg's libraries are not installed, or a stream's codec has no allowed decoder.
  /// - Throws: `undecodable` with why; `deadline_exceeded`; `too_many_pixels` for a frame over
  ///   ``DecodeCheckConfiguration/maximumFramePixels``.
  func reply(_ job: RescueJob) throws(AttachmentError) -> WorkerReply {
    guard let av = Libav.shared else {
      return WorkerReply(unchecked: "FFmpeg's libraries (libavformat59, libavcodec59) are not installed")
    }
    let interrupt = MediaInterrupt(deadline: job.deadline)
    do throws(MediaFailure) {
      // The type's own demuxer when it has one (an MP3 whose ID3 tag a probe of its bytes
      // misreads is still an MP3 to a player told so); else the probe's.
      let demuxer = job.refusal.type?.demuxer.flatMap { $0.contains(",") ? nil : $0 }
      let input = try MediaInput(
        path: job.source, av: av, interrupt: interrupt, maximumTracks: 256,
        maximumFramePixels: configuration.maximumFramePixels, format: demuxer)
      let streams = try played(by: input, category: job.refusal.category)
      if let unchecked = streams.unchecked { return WorkerReply(unchecked: unchecked) }
      var checks: [Int: CopyCheck] = [:]
      for (index, isVideo) in streams.checked {
        guard let stream = input.stream(index) else { continue }
        checks[index] = try CopyCheck(
          stream: stream, isVideo: isVideo, threads: 0, maximumPixels: configuration.maximumFramePixels,
          av: av, judgement: .starts)
      }
      try feed(input, checks: checks)
      for check in checks.values { try check.finish() }
      return WorkerReply()
    } catch {
      switch error {
      case .unrescued(let reason):
        if interrupt.hasFired { throw MediaInterrupt.deadlineError }
        throw AttachmentError(.undecodable, "No decoder starts it: \(reason).", detected: job.refusal.format)
      case .error(let reported): throw reported
      }
    }
  }

  /// The streams the attachment plays, by index, and whether each is video: a video's best
  /// video stream and, when FFmpeg decodes it, its best audio stream (a movie whose audio iOS
  /// does not decode is accepted to play silent); an audio file's best audio stream.
  /// `unchecked` says why nothing is checked: the stream's codec has no allowed decoder.
  /// - Throws: the reason when the stream the file is accepted for is not found, FFmpeg names
  ///   no codec for it, or an audio file's cover art has no picture size.
  private func played(by input: MediaInput, category: MediaType.Category?) throws(MediaFailure) -> (
    checked: [(Int, Bool)], unchecked: String?
  ) {
    let source = input.source(bytes: 0)
    let isVideo = category == .video
    guard let main = isVideo ? source.video : source.audio else {
      throw .unrescued("FFmpeg finds no \(isVideo ? "video" : "audio") stream in it")
    }
    guard main.codec != "none" else { throw .unrescued("FFmpeg names no codec for its stream") }
    guard main.decodable else {
      return ([], "FFmpeg's allowed decoders do not read its \(main.codec) stream")
    }
    if !isVideo, let cover = unsizedCoverArt(in: input) {
      throw .unrescued("its cover art (\(cover)) has no picture size FFmpeg can read")
    }
    var checked = [(main.index, isVideo)]
    if isVideo, let audio = source.audio, audio.decodable { checked.append((audio.index, false)) }
    return (checked, nil)
  }

  /// The codec of a cover art stream (an attached picture) of `input` whose picture size FFmpeg
  /// could not find; `nil` when there is none.
  private func unsizedCoverArt(in input: MediaInput) -> String? {
    for index in 0..<Int(input.context.pointee.nb_streams) {
      guard let stream = input.stream(index), stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
        let parameters = stream.pointee.codecpar,
        parameters.pointee.width <= 0 || parameters.pointee.height <= 0
      else { continue }
      return input.av.name(of: parameters.pointee.codec_id)
    }
    return nil
  }

  /// Reads packets from the start and feeds each checked stream's to its check, until every
  /// stream has passed ``DecodeCheckConfiguration/seconds`` from its first packet (or the file
  /// ends, or ``maximumPackets`` were read). A read error ends the input, as it ends a player's.
  private func feed(_ input: MediaInput, checks: [Int: CopyCheck]) throws(MediaFailure) {
    let av = input.av
    for index in 0..<Int(input.context.pointee.nb_streams) where checks[index] == nil {
      input.stream(index)?.pointee.discard = AVDISCARD_ALL
    }
    let owned = try OwnedPacket(av: av)
    defer { withExtendedLifetime(owned) {} }  // freed at the end of the function, not after its last use
    let packet = owned.pointer
    var first: [Int: Int64] = [:]
    var passed = Set<Int>()
    var read = 0
    while passed.count < checks.count, read < Self.maximumPackets {
      do {
        guard try input.read(into: packet) else { return }
      } catch {
        if case .error = error { throw error }
        return  // a packet FFmpeg cannot read: the end of the input
      }
      defer { av.av_packet_unref(packet) }
      read += 1
      let index = Int(packet.pointee.stream_index)
      guard let check = checks[index], !passed.contains(index), let stream = input.stream(index) else {
        continue
      }
      let time = packet.pointee.pts != ak_av_nopts_value() ? packet.pointee.pts : packet.pointee.dts
      if time != ak_av_nopts_value() {
        let start = first[index] ?? time
        first[index] = start
        if MediaEngine.seconds(time - start, stream.pointee.time_base) >= configuration.seconds {
          passed.insert(index)
          continue
        }
      }
      try check.feed(packet)
    }
  }
}
