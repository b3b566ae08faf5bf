import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A stream-copied trim of an open-GOP H.264 source: the B-frames shown just before the
/// keyframe at the cut come after it in decode order and are predicted from it. Copied without
/// it they decode wrongly and silently (FFmpeg reports no error: `ffmpeg -v error -i out.mp4
/// -f null -` is clean), so the cut drops every video packet from that keyframe on.
@Suite("Media rescue: open-GOP trims", .rescueTurn, .threadOfItsOwn)
struct MediaOpenGOPTests {
  @Test("a 34 s open-GOP H.264 MP4 trimmed by copy decodes to exactly the source's frames, to its last")
  func openGOPTrimDecodesExactly() async throws {
    let scratch = try ScratchDirectory("media-open-gop")
    defer { scratch.remove() }
    // A keyframe every 2 s, 3 B-frames, open GOPs: each keyframe's leading B-frames follow it
    let source = scratch.path + "/open-gop.mp4"
    try await Self.ffmpeg([
      "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "34", "-c:v", "libx264", "-preset",
      "veryfast", "-pix_fmt", "yuv420p", "-x264-params",
      "keyint=60:min-keyint=60:open-gop=1:bframes=3:b-adapt=0:scenecut=0", "-threads", "1", source,
    ])
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    let output = scratch.path + "/out.mp4"

    let rescue = try MediaRescuer().rescue(
      RescueJob(
        source: source, bytes: MediaRescuerTests.size(source), refusal: refusal, output: output,
        limits: ValidationLimits(), deadline: .now + .seconds(20)))

    #expect(rescue.actions == [.trimmed])
    let seconds = try #require(try Validator().validate(file: output).durationSeconds)
    #expect(seconds <= 30 && seconds >= 29.8, "\(seconds) s")
    // Every delivered frame equals the source's frame at its time (PSNR infinite), the last
    // ones too (they were 17–23 dB when the leading B-frames were copied without their keyframe)
    let stats = scratch.path + "/psnr.txt"
    try await Self.ffmpeg([
      "-i", output, "-i", source, "-lavfi",
      "[0:v]setpts=PTS-STARTPTS[a];[1:v]setpts=PTS-STARTPTS[b];[a][b]psnr=shortest=1:stats_file=\(stats)",
      "-f", "null", "-",
    ])
    let lines = try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n")
    #expect(lines.count >= 890, "\(lines.count) frames compared")
    let differing = lines.filter { !$0.contains("psnr_avg:inf") }
    #expect(differing.isEmpty, "\(differing.prefix(4))")
  }

  /// Runs the `ffmpeg` command (quiet, no standard input) on a thread of its own.
  static func ffmpeg(_ arguments: [String]) async throws {
    let status = try await onOwnThread { () throws -> Int32 in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = ["-nostdin", "-loglevel", "error", "-y"] + arguments
      process.standardInput = FileHandle.nullDevice
      try process.runClosingChildEnds()
      process.blockUntilExit()
      process.closeStandardPipes()
      return process.terminationStatus
    }
    try #require(status == 0, "ffmpeg \(arguments.joined(separator: " ")) exited \(status)")
  }
}
