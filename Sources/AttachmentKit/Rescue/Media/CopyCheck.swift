import CAV
import CWorkerIO
import Glibc

/// Decodes what a re-wrap or a trim copies, so that a damaged bitstream is not delivered as a
/// playable file: a structural check reads a copied stream's packets, not their contents (a
/// fuzz run found 128 of 862 delivered files with decode errors, all carried by stream copy).
///
/// Every packet of a copied audio stream is decoded, and a copied video stream's packets up to
/// its second keyframe (its first group of pictures: what a device shows first, at a fraction
/// of a full decode's cost). Decoders run with FFmpeg's error concealment off (`AV_EF_EXPLODE`
/// and the checks it strengthens), so damage is an error, not a picture or a sound quietly
/// repaired.
///
/// The decoding runs on a thread of its own, fed through a ``PacketQueue``, so that the copy
/// goes on while the check decodes: on two cores a trim costs about the longer of the two
/// rather than their sum. Released before ``finish()`` (the copy failed), the check stops
/// without decoding what is queued, and its thread is joined.
///
/// An accepted file's decode check (``DecodeStart``) runs the same check with the judgement
/// ``Judgement/starts``: what it refuses is a stream that does not start, not one with damage.
final class CopyCheck {
  /// The name of a check's thread (in `/proc/PID/task/*/comm`, `top -H`).
  static let threadName = "copy-check"

  /// What the check refuses.
  enum Judgement {
    /// A stream copied into a delivered file: any packet that does not decode cleanly, with
    /// error concealment off.
    case clean
    /// A stream of an accepted file: one that does not start as a player decodes it (error
    /// concealment on): no packet read, no frame decoded, or more than two packets in three
    /// damaged (FFmpeg's own `-max_error_rate`, past which the `ffmpeg` command fails).
    case starts
  }

  private let work: CopyCheckWork
  private var thread: pthread_t?
  /// Video keyframes fed so far; past the first group of pictures nothing more is queued, so
  /// that the copy never waits for the check to drain a queue it does not need.
  private var keyframes = 0
  private var isFed = false

  /// A check of `stream`, copied as video or audio; its thread starts here. A video's decoder
  /// runs two frame threads, or `threads` when that is fewer and not 0
  /// (``MediaRescueConfiguration/threads``): two halve the check's wall time on two cores,
  /// where more only contend with the copy.
  /// - Throws: a reason when no allowed decoder reads the stream (a copy that cannot be checked
  ///   is not delivered), or the thread cannot start.
  init(
    stream: UnsafeMutablePointer<AVStream>, isVideo: Bool, threads: Int, maximumPixels: Int64, av: Libav,
    judgement: Judgement = .clean
  ) throws(MediaFailure) {
    let name = av.name(of: stream.pointee.codecpar?.pointee.codec_id ?? AV_CODEC_ID_NONE)
    let videoThreads = threads > 0 ? min(threads, 2) : 2
    let decoder = try MediaDecoder(
      stream: stream, threads: isVideo ? videoThreads : 1, maximumPixels: maximumPixels, av: av,
      strict: judgement == .clean)
    work = CopyCheckWork(
      decoder: decoder, isVideo: isVideo, name: name, judgement: judgement, queue: PacketQueue(av: av))
    var started = pthread_t()
    let context = Unmanaged.passRetained(work).toOpaque()
    let code = pthread_create(
      &started, nil,
      { context in
        guard let context else { return nil }
        _ = ak_name_this_thread(CopyCheck.threadName)
        Unmanaged<CopyCheckWork>.fromOpaque(context).takeRetainedValue().run()
        return nil
      }, context)
    guard code == 0 else {
      Unmanaged<CopyCheckWork>.fromOpaque(context).release()
      throw .unrescued("its copy cannot be checked (no thread: \(String(cString: strerror(code))))")
    }
    thread = started
  }

  deinit {
    work.queue.refuse()
    work.queue.close()
    join()
  }

  /// Hands `packet`, a packet of the copied stream about to be written, to the check (a
  /// reference to it: the writer may take the packet itself).
  /// - Throws: the check's failure, as soon as it is known; "out of memory".
  func feed(_ packet: UnsafeMutablePointer<AVPacket>) throws(MediaFailure) {
    guard !isFed else { return }
    // (a check of ``Judgement/starts`` takes what its caller feeds: a time window, not a GOP)
    if work.isVideo, work.judgement == .clean, packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
      keyframes += 1
      if keyframes > 1 {
        // The first group of pictures is all queued: the check decodes it, then ends.
        isFed = true
        work.queue.close()
        return
      }
    }
    switch work.queue.push(packet) {
    case .queued: return
    case .refused: try settle()  // the check has ended: its failure, if any
    case .outOfMemory: throw .unrescued("out of memory")
    }
  }

  /// Waits for the check to decode what it was fed, and refuses the copy when any packet did
  /// not decode cleanly.
  func finish() throws(MediaFailure) {
    work.queue.close()
    try settle()
  }

  /// Joins the thread once it has stopped taking packets, and throws its failure.
  private func settle() throws(MediaFailure) {
    join()
    if let failure = work.failure { throw failure }
  }

  private func join() {
    guard let running = thread else { return }
    thread = nil
    pthread_join(running, nil)
  }
}

/// What the check's thread owns: the decoder (touched by no other thread while it runs), the
/// queue it reads, and the failure it leaves (read after it is joined).
private final class CopyCheckWork: @unchecked Sendable {
  let decoder: MediaDecoder
  let isVideo: Bool
  let name: String
  let judgement: CopyCheck.Judgement
  let queue: PacketQueue
  var failure: MediaFailure?
  /// Packets decoded and frames they gave (read by ``CopyCheck/Judgement/starts``).
  private var packets = 0
  private var frames = 0
  private var flushFailures = 0

  init(decoder: MediaDecoder, isVideo: Bool, name: String, judgement: CopyCheck.Judgement, queue: PacketQueue)
  {
    self.decoder = decoder
    self.isVideo = isVideo
    self.name = name
    self.judgement = judgement
    self.queue = queue
  }

  /// Decodes what is queued until the queue is closed and drained, or a packet fails; then
  /// refuses further packets.
  func run() {
    defer { queue.refuse() }
    do throws(MediaFailure) {
      try decodeQueued()
      // Frames the decoder still holds (reordering) are drained, so damage in them counts too.
      do {
        try decoder.decode(nil) { _ throws(MediaFailure) in frames += 1 }
      } catch {
        // A decoder that fails as it is drained has damaged packets behind it: for a check
        // of whether the stream starts, one more damaged packet, as `ffmpeg` counts it.
        guard judgement == .starts, case .unrescued = error else { throw error }
        flushFailures += 1
      }
      try judge(damaged: decoder.damagedPackets + flushFailures)
    } catch {
      failure = error
    }
  }

  /// Throws the reason the stream is refused, by the check's judgement.
  private func judge(damaged: Int) throws(MediaFailure) {
    switch judgement {
    case .clean:
      guard damaged > 0 else { return }
      let part = isVideo ? "video (\(name), its first group of pictures)" : "audio (\(name))"
      throw .unrescued(
        "its \(part) would be copied, and does not decode cleanly (\(damaged) damaged packet\(damaged == 1 ? "" : "s"))"
      )
    case .starts:
      let why: String
      if packets == 0 {
        why = "no packet of it is read"
      } else if frames == 0 {
        why = "no frame of it decodes (\(packets) packet\(packets == 1 ? "" : "s") read)"
      } else if damaged * 3 > (packets + flushFailures) * 2 {
        why = "\(damaged) of its first \(packets) packets do not decode"
      } else {
        return
      }
      throw .unrescued("its \(isVideo ? "video" : "audio") (\(name)) does not start: \(why)")
    }
  }

  private func decodeQueued() throws(MediaFailure) {
    while let packet = queue.pop() {
      defer { queue.free(packet) }
      packets += 1
      try decoder.decode(packet) { _ throws(MediaFailure) in frames += 1 }
    }
  }
}
