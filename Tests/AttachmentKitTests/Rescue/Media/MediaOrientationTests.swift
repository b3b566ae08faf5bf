import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A phone's portrait video is stored landscape with a display matrix that turns it; what a
/// rescue delivers keeps it, or plays sideways on the device.
@Suite("Media rescue: a rotated video stays upright", .rescueTurn, .threadOfItsOwn)
struct MediaOrientationTests {
  /// `rotate` as `ffprobe` reads the first video stream's display matrix (`nil`: none).
  static func rotation(_ path: String) async throws -> Int? {
    let output = try await onOwnThread { () throws -> String in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
      process.arguments = [
        "-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data=rotation", "-of",
        "default=noprint_wrappers=1:nokey=1", path,
      ]
      let pipe = Pipe.closingOnExec()
      process.standardOutput = pipe
      process.standardInput = FileHandle.nullDevice
      try process.runClosingChildEnds()
      let data = pipe.fileHandleForReading.readDataToEndOfFile()
      process.blockUntilExit()
      process.closeStandardPipes()
      return String(decoding: data, as: UTF8.self)
    }
    return output.split(whereSeparator: \.isNewline).compactMap { Int($0) }.first
  }

  /// A 320×240 H.264 clip of `seconds` (or VP9 in MP4 when `vp9`) marked rotated by 90°.
  static func rotated(_ name: String, seconds: Int, vp9: Bool = false, in directory: String) async throws
    -> String
  {
    let plain = directory + "/plain-" + name
    let codec =
      vp9
      ? ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"]
      : ["-c:v", "libx264", "-preset", "ultrafast", "-g", "30"]
    try await MediaOpenGOPTests.ffmpeg(
      ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", String(seconds)] + codec + [plain])
    let path = directory + "/" + name
    try await MediaOpenGOPTests.ffmpeg(["-i", plain, "-c", "copy", "-metadata:s:v", "rotate=90", path])
    #expect(try await rotation(path) == 90, "the source is marked rotated")
    return path
  }

  @Test("a trim by copy and a transcode both keep the source's 90° display matrix")
  func rotationKept() async throws {
    let scratch = try ScratchDirectory("media-orientation")
    defer { scratch.remove() }
    let long = try await Self.rotated("long.mp4", seconds: 40, in: scratch.path)
    let trimmed = scratch.path + "/trimmed.mp4"
    let trim = try await onOwnThread { try CopyCheckTests.rescue(long, output: trimmed) }
    #expect(try trim.get().actions == [.trimmed])
    #expect(try await Self.rotation(trimmed) == 90)

    let vp9 = try await Self.rotated("vp9.mp4", seconds: 2, vp9: true, in: scratch.path)
    let transcoded = scratch.path + "/transcoded.mp4"
    let transcode = try await onOwnThread { try CopyCheckTests.rescue(vp9, output: transcoded) }
    #expect(try transcode.get().actions == [.transcoded])
    #expect(try await Self.rotation(transcoded) == 90)
  }
}
