import Foundation
import TestSupport
import TestTraits
import Testing

/// A decode bomb for the media rescue: a 3 s 160×120 VP9 WebM (about 30 KB) whose second and
/// third keyframes are edited to declare 12000×12000. Its stream parameters (read from the
/// first frame) pass every declared budget; decoding it as it is allocates two 144-megapixel
/// frames (before the decoders' `max_pixels`, the rescue peaked at 527 MiB on it and delivered
/// a clip of the frames that decoded).
@Suite("CLI: media decode bomb", .serialized, .threadOfItsOwn)
struct MediaDecodeBombCLITests {
  @Test(
    "a later keyframe declaring 12000×12000 is refused with too_many_pixels, small, at once, leaving no file")
  func laterKeyframeBomb() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bomb = try await DecodeBomb.make(in: scratch.path)
    let output = scratch.path + "/out.mp4"

    // GNU time's %M: the child's peak resident set, in KiB, as the last line of standard error.
    let run = try await CLI.run(
      program: "/usr/bin/time",
      ["-f", "%M", CLI.attachkit, "rescue", "--json", "--deadline", "20", bomb, "--output", output])

    let line = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("{") })
    let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    let error = json["error"] as? [String: Any]
    #expect(error?["code"] as? String == "too_many_pixels", "\(line)")
    #expect((error?["message"] as? String)?.contains("stream parameters did not") == true, "\(line)")
    let peakKiB = try #require(run.stderr.split(separator: "\n").last.flatMap { Int($0) }, "\(run.stderr)")
    // Two 144-megapixel frames are over 400 MiB; the process itself (with FFmpeg) about 60.
    #expect(peakKiB < 300 * 1024, "peak RSS \(peakKiB) KiB")
    let milliseconds = (json["timings"] as? [String: Any])?["totalMs"] as? Double ?? .infinity
    #expect(milliseconds < 20_000, "answered after \(milliseconds) ms, past its 20 s deadline")
    #expect(!FileManager.default.fileExists(atPath: output))
  }
}

extension MediaDecodeBombCLITests {
  @Test(
    "keyframes that change size within the budget (320×240, 240×180, 160×120) are transcoded whole, 3 s at 320×240"
  )
  func sizeChangesWithinBudget() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    var list = ""
    for size in ["320x240", "240x180", "160x120"] {
      let part = scratch.path + "/part-\(size).webm"
      let made = try await CLI.run(
        program: "/usr/bin/ffmpeg",
        [
          "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
          "testsrc=size=\(size):rate=15:duration=1",
          "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-pix_fmt",
          "yuv420p",
          "-row-mt", "0", "-threads", "1", part,
        ])
      try #require(made.status == 0, "ffmpeg: \(made.stderr)")
      list += "file '\(part)'\n"
    }
    try writeTestFile(Data(list.utf8), to: scratch.path + "/parts.txt")
    let source = scratch.path + "/sizes.webm"
    let joined = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i",
        scratch.path + "/parts.txt",
        "-c", "copy", source,
      ])
    try #require(joined.status == 0, "ffmpeg: \(joined.stderr)")

    let run = try await CLI.run(["rescue", "--json", source, "--output", scratch.path + "/out.mp4"])

    // One scaler for the first size read the next sizes' frames wrongly: FFmpeg refused them
    // ("Not rescued: FFmpeg cannot scale a frame"); each size now gets its own.
    let line = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("{") })
    let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(json["outcome"] as? String == "accepted", "\(line)")
    #expect((json["durationSeconds"] as? Double).map { abs($0 - 3) < 0.1 } == true, "\(line)")
    #expect(json["width"] as? Int == 320 && json["height"] as? Int == 240, "\(line)")
  }
}

/// Makes the decode bomb of ``MediaDecodeBombCLITests`` with the `ffmpeg` command and an edit
/// of the VP9 uncompressed headers of its later keyframes.
enum DecodeBomb {
  /// The side the later keyframes declare, in pixels.
  static let side = 12_000

  /// Writes `bomb.webm` in `directory` and returns its path.
  static func make(in directory: String) async throws -> String {
    let clean = directory + "/clean.webm"
    let made = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "testsrc=size=160x120:rate=15:duration=3",
        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "100k", "-g", "15",
        "-keyint_min", "15", "-pix_fmt", "yuv420p", "-row-mt", "0", "-threads", "1", clean,
      ])
    try #require(made.status == 0, "ffmpeg: \(made.stderr)")
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: clean)))
    // A profile 0 keyframe: 0x82 (frame marker 2, profile 0, key, shown), the sync code
    // 49 83 42, colour space and range (4 bits), then width − 1 and height − 1, 16 bits each.
    let keyframes = (0..<max(0, bytes.count - 8)).filter {
      bytes[$0] == 0x82 && bytes[$0 + 1] == 0x49 && bytes[$0 + 2] == 0x83 && bytes[$0 + 3] == 0x42
    }
    try #require(keyframes.count == 3, "keyframes at \(keyframes)")
    for start in keyframes {
      try #require(bits(bytes, start, 36, 16) == 159 && bits(bytes, start, 52, 16) == 119)
    }
    for start in keyframes.dropFirst() {
      setBits(&bytes, start, 36, 16, side - 1)
      setBits(&bytes, start, 52, 16, side - 1)
    }
    let bomb = directory + "/bomb.webm"
    try writeTestFile(Data(bytes), to: bomb)
    return bomb
  }

  private static func bits(_ bytes: [UInt8], _ start: Int, _ offset: Int, _ count: Int) -> Int {
    (offset..<offset + count).reduce(0) { value, bit in
      value << 1 | Int(bytes[start + bit / 8] >> (7 - bit % 8) & 1)
    }
  }

  private static func setBits(_ bytes: inout [UInt8], _ start: Int, _ offset: Int, _ count: Int, _ value: Int)
  {
    for index in 0..<count {
      let bit = offset + index
      let mask = UInt8(1) << (7 - bit % 8)
      let on = (value >> (count - 1 - index)) & 1 == 1
      bytes[start + bit / 8] = on ? bytes[start + bit / 8] | mask : bytes[start + bit / 8] & ~mask
    }
  }
}
