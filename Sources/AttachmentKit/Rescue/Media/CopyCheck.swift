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
final class CopyCheck {
  /// The name of a check's thread (in `/proc/PID/task/*/comm`, `top -H`).
  static let threadName = "copy-check"

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
    stream: UnsafeMutablePointer<AVStream>, isVideo: Bool, threads: Int, maximumPixels: Int64, av: Libav
  ) throws(MediaFailure) {
    let name = av.name(of: stream.pointee.codecpar?.pointee.codec_id ?? AV_CODEC_ID_NONE)
    let videoThreads = threads > 0 ? min(threads, 2) : 2
    let decoder = try MediaDecoder(
      stream: stream, threads: isVideo ? videoThreads : 1, maximumPixels: maximumPixels, av: av, strict: true)
    work = CopyCheckWork(decoder: decoder, isVideo: isVideo, name: name, queue: PacketQueue(av: av))
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
    if work.isVideo, packet.pointee.flags & AV_PKT_FLAG_KEY != 0 {
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
  let queue: PacketQueue
  var failure: MediaFailure?

  init(decoder: MediaDecoder, isVideo: Bool, name: String, queue: PacketQueue) {
    self.decoder = decoder
    self.isVideo = isVideo
    self.name = name
    self.queue = queue
  }

  /// Decodes what is queued until the queue is closed and drained, or a packet fails; then
  /// refuses further packets.
  func run() {
    defer { queue.refuse() }
    do throws(MediaFailure) {
      try decodeQueued()
      // Frames the decoder still holds (reordering) are drained, so damage in them counts too.
      try decoder.decode(nil) { _ throws(MediaFailure) in }
      let damaged = decoder.damagedPackets
      guard damaged > 0 else { return }
      let part = isVideo ? "video (\(name), its first group of pictures)" : "audio (\(name))"
      throw MediaFailure.unrescued(
        "its \(part) would be copied, and does not decode cleanly (\(damaged) damaged packet\(damaged == 1 ? "" : "s"))"
      )
    } catch {
      failure = error
    }
  }

  private func decodeQueued() throws(MediaFailure) {
    while let packet = queue.pop() {
      defer { queue.free(packet) }
      try decoder.decode(packet) { _ throws(MediaFailure) in }
    }
  }
}
