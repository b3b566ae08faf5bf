import Foundation
import TestSupport
import TestTraits
import Testing

/// What libvips and FFmpeg log during a rescue reaches the result as its warnings (the table,
/// the JSON record), never standard error raw.
@Suite("CLI: the libraries' own messages", .threadOfItsOwn)
struct LibraryMessagesCLITests {
  /// `bytes` with `count` bytes from `start` zeroed (0xFF and the byte after one left alone, so
  /// that no marker appears or vanishes).
  static func damaged(_ bytes: [UInt8], from start: Int, count: Int) -> [UInt8] {
    var copy = bytes
    for index in start..<min(start + count, copy.count - 2)
    where copy[index] != 0xFF && copy[index - 1] != 0xFF {
      copy[index] = 0
    }
    return copy
  }

  @Test(
    "a JPEG with a stray marker in its scan, downscaled: libvips' warnings are the result's, stderr has none of them"
  )
  func libvipsWarnings() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let photo = scratch.path + "/photo.jpg"
    #expect(await ImageBombs.vips(["gaussnoise", photo, "1600", "1000"]) == 0)
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: photo)))
    let source = scratch.path + "/damaged.jpg"
    // A restart marker where the scan has none: libjpeg warns that its data segment ended early.
    let middle = bytes.count / 2
    try writeTestFile(Array(bytes[..<middle]) + [0xFF, 0xD0] + Array(bytes[middle...]), to: source)

    let arguments = ["--max-image-bytes", "200KB", source, "-o", scratch.path + "/out.jpg"]
    let json = try await CLI.run(["rescue", "--json"] + arguments)
    #expect(json.status == 0, "\(json.stderr)")
    let line = try #require(json.jsonLines.first)
    let warnings = line["warnings"] as? [String] ?? []
    #expect(
      warnings.contains { $0.hasPrefix("libvips: ") && $0.contains("Corrupt JPEG data") }, "\(warnings)")
    #expect((line["rescued"] as? [String: Any])?["actions"] as? [String] == ["downscaled"])
    #expect(!json.stderr.contains("VIPS") && !json.stderr.contains("Corrupt"), "\(json.stderr)")

    let table = try await CLI.run(["rescue"] + arguments)
    #expect(table.status == 0)
    #expect(table.stdout.contains("↳ rescued from image/jpeg 1600×1000"), "\(table.stdout)")
    #expect(table.stdout.contains("↳ warning: libvips: "), "\(table.stdout)")
    #expect(table.stdout.contains("(1 rescued)"), "\(table.stdout)")
  }

  @Test("a FLAC with a damaged frame, transcoded: FFmpeg's messages are the result's; a clean one has none")
  func ffmpegMessages() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let clean = scratch.path + "/clean.flac"
    let made = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      ["-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=10", clean])
    #expect(made.status == 0, "\(made.stderr)")
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: clean)))
    let damaged = scratch.path + "/damaged.flac"
    try writeTestFile(Self.damaged(bytes, from: bytes.count / 2, count: 200), to: damaged)

    let run = try await CLI.run(["rescue", "--json", damaged, "-o", scratch.path + "/out.m4a"])
    #expect(run.status == 0, "\(run.stderr)")
    let warnings = run.jsonLines.first?["warnings"] as? [String] ?? []
    #expect(warnings.contains { $0.hasPrefix("FFmpeg: [flac] ") }, "\(warnings)")
    #expect(!run.stderr.contains("[flac"), "\(run.stderr)")

    let quiet = try await CLI.run(["rescue", "--json", clean, "-o", scratch.path + "/clean.m4a"])
    #expect(quiet.status == 0)
    #expect(quiet.jsonLines.first?["warnings"] as? [String] == [], "\(quiet.stdout)")
  }
}
