import CAV
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A re-wrap copies streams packet for packet; what it copies is decoded first (issue #36,
/// item 4: a fuzz run found damaged bitstreams delivered through a structural check). The
/// damage is made by FFmpeg's own `noise` bitstream filter, which keeps the container intact.
@Suite("Media rescue: copied streams are decoded first", .rescueTurn, .threadOfItsOwn)
struct CopyCheckTests {
  /// A 4 s H.264 + AAC Matroska file (two groups of pictures), and copies of it whose audio or
  /// video packets are damaged.
  static func sources(in directory: String) async throws -> (clean: String, audio: String, video: String) {
    let clean = directory + "/clean.mkv"
    try await MediaOpenGOPTests.ffmpeg([
      "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440", "-t",
      "4",
      "-c:v", "libx264", "-g", "50", "-c:a", "aac", clean,
    ])
    let audio = directory + "/damaged-audio.mkv"
    try await MediaOpenGOPTests.ffmpeg(["-i", clean, "-c", "copy", "-bsf:a", "noise=amount=200", audio])
    let video = directory + "/damaged-video.mkv"
    try await MediaOpenGOPTests.ffmpeg(["-i", clean, "-c", "copy", "-bsf:v", "noise=amount=500", video])
    return (clean, audio, video)
  }

  static func rescue(_ path: String, output: String) throws -> Result<Rescue, AttachmentError> {
    let refusal = try #require(MediaRescuerTests.refusal(of: path))
    let job = RescueJob(
      source: path, bytes: MediaRescuerTests.size(path), refusal: refusal, output: output,
      limits: ValidationLimits(), deadline: .now + .seconds(30))
    return Result { () throws(AttachmentError) in try MediaRescuer().rescue(job) }
  }

  @Test("a clean H.264 + AAC Matroska is re-wrapped; with damaged audio or a damaged first GOP it is not")
  func damagedCopiesAreRefused() async throws {
    let scratch = try ScratchDirectory("copy-check")
    defer { scratch.remove() }
    let (clean, audio, video) = try await Self.sources(in: scratch.path)

    let rewrapped = try await onOwnThread { try Self.rescue(clean, output: scratch.path + "/clean.mp4") }
    #expect(try rewrapped.get().actions == [.rewrapped])

    let audioAnswer = try await onOwnThread { try Self.rescue(audio, output: scratch.path + "/audio.mp4") }
    guard case .failure(let audioError) = audioAnswer else {
      Issue.record("damaged audio was delivered")
      return
    }
    #expect(audioError.code == .unsupportedType, "\(audioError)")
    #expect(
      audioError.message.contains("its audio (aac) would be copied, and does not decode cleanly"),
      "\(audioError)")

    let videoAnswer = try await onOwnThread { try Self.rescue(video, output: scratch.path + "/video.mp4") }
    guard case .failure(let videoError) = videoAnswer else {
      Issue.record("damaged video was delivered")
      return
    }
    #expect(videoError.message.contains("its video (h264, its first group of pictures)"), "\(videoError)")
  }

  @Test("a check released before it finishes (the copy failed) stops and joins its thread")
  func abandonedCheckStops() async throws {
    let scratch = try ScratchDirectory("copy-check-abandon")
    defer { scratch.remove() }
    let (clean, _, _) = try await Self.sources(in: scratch.path)
    let av = try #require(Libav.shared)
    let alive = try await onOwnThread { () throws -> [Int] in
      let input = try MediaInput(
        path: clean, av: av, interrupt: MediaInterrupt(deadline: nil), maximumTracks: 8,
        maximumFramePixels: 1 << 24)
      let owned = try OwnedPacket(av: av)
      var checks: [Int: CopyCheck] = [:]
      for index in 0..<Int(input.context.pointee.nb_streams) {
        let stream = try #require(input.stream(index))
        let isVideo = stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
        checks[index] = try CopyCheck(
          stream: stream, isVideo: isVideo, threads: 0, maximumPixels: 1 << 24, av: av)
      }
      // A few packets of each stream, then the copy "fails": the checks are released unfinished.
      for _ in 0..<12 {
        guard try input.read(into: owned.pointer) else { break }
        try checks[Int(owned.pointer.pointee.stream_index)]?.feed(owned.pointer)
        av.av_packet_unref(owned.pointer)
      }
      // Each thread names itself once it runs: on a loaded machine that can be a while after
      // the check is made, so its name is awaited (here, on a thread of the test's own).
      let during = Self.checkThreads(reaching: checks.count, within: 30)
      checks.removeAll()
      return [during, Self.checkThreads()]
    }
    #expect(alive[0] == 2, "a thread per copied stream while the copy runs")
    #expect(alive[1] == 0, "no check thread is left once the checks are released")
  }

  /// The threads named as a copy check's once `count` are, or when `seconds` have passed.
  static func checkThreads(reaching count: Int, within seconds: Double) -> Int {
    let end = Date().addingTimeInterval(seconds)
    var seen = checkThreads()
    while seen < count, Date() < end {
      usleep(2_000)
      seen = checkThreads()
    }
    return seen
  }

  /// The threads of this process named as a copy check's thread.
  static func checkThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { task in
      let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
      return name.trimmingCharacters(in: .whitespacesAndNewlines) == CopyCheck.threadName
    }.count
  }
}
