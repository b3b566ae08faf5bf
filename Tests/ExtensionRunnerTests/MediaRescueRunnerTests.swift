import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

/// The runner's media rescue: trims by copy and re-wraps whatever the budget, a transcode only
/// when its estimate fits the time left before time-will-expire; one that does not fit keeps
/// its refusal, at once, without decoding a frame.
@Suite("Runner: media rescue within the budget", .threadOfItsOwn, .cpuBound)
struct MediaRescueRunnerTests {
  static func payload(_ attachments: [(url: String, id: String)]) -> String {
    let items = attachments.map { #"{"url": "{BASE}\#($0.url)", "id": "\#($0.id)"}"# }
    return
      #"{"aps": {"alert": "clip", "mutable-content": 1}, "attachments": [\#(items.joined(separator: ", "))]}"#
  }

  @Test(
    "with 8 s of budget a 40 s clip is trimmed; a 40 s 720p transcode and a WebM's get posters at once, or with --no-poster are refused with their estimates"
  )
  func transcodeOverBudgetRefused() async throws {
    // Given a 40 s H.264 clip (a copy trim), 40 s of 1280×720 MPEG-4 part 2 at 30 fps in AVI
    // (a transcode of the 30 s it would keep, estimated at 30 × 0.92 MP × (0.25 + 0.06) s =
    // 8.6 s) and 30 s of it as VP8 in WebM (8.6 s too): both longer than the whole budget, so
    // that the budget can leave a loaded machine seconds for the trim, its worker's start and
    // the posters
    let fixture = try RunnerFixture("media-budget")
    defer { fixture.close() }
    let big = try await Self.generate(in: fixture, "clip-720p-40s.avi", size: "1280x720", seconds: 40)
    let webm = try await Self.generate(in: fixture, "clip-720p-30s.webm", size: "1280x720", seconds: 30)
    let payload = try fixture.write(
      "clips.json", Self.payload([("/media/too-long-video-40s.mp4", "trim"), (big, "big"), (webm, "webm")]))

    // When the runner runs it with an 8 s budget (time-will-expire at 7 s), under GNU time
    let result = try await fixture.runBinary(
      fixture.commonArguments + ["--budget", "8", "--trace", payload],
      wrapper: ["/usr/bin/time", "-f", "cpu %U %S"])

    // Then the trim is delivered, and a JPEG poster of each video that cannot be transcoded in
    // the time left (the poster keeps 3 s of the budget: the transcodes are refused at once)
    let output = try result.output()
    #expect(output.attachments.map(\.identifier) == ["trim", "big", "webm"], "\(result.standardError)")
    #expect(output.attachments.first?.typeHint == "public.mpeg-4")
    let trimmed = try Validator().validate(file: try #require(output.attachments.first?.path))
    #expect(trimmed.durationSeconds.map { $0 <= 30 && $0 >= 29 } == true, "\(String(describing: trimmed))")
    for poster in output.attachments.dropFirst() {
      #expect(poster.typeHint == "public.jpeg", "\(poster)")
      let validation = try Validator().validate(file: poster.path)
      #expect(validation.type == .jpeg)
    }
    // … by the extension before time-will-expire: a transcode that had started would still be
    // running then (it takes longer than its estimate here), and be cut at the deadline
    #expect(result.standardError.contains("by the extension, all steps done"), "\(result.standardError)")
    #expect(output.trace?.contains { $0.name == "time will expire" } == false)
    // … and the process spent little CPU: no transcode started (it keeps both cores busy until
    // the deadline); a poster decodes a frame or two
    let cpu = try #require(Self.cpuSeconds(result.standardError), "\(result.standardError)")
    #expect(cpu < 2, "\(cpu) s of CPU")

    // With --no-poster and the same cache, the posters are not served: the refusal says why
    let again = try await fixture.runBinary(
      fixture.commonArguments + ["--budget", "8", "--no-poster", "--trace", payload])
    let cached = try again.output()
    #expect(cached.attachments.map(\.identifier) == ["trim"], "\(again.standardError)")
    #expect(
      cached.trace?.contains {
        $0.detail.contains("made from it by the poster rescuer, which this caller does not use")
      }
        == true, "\(again.standardError)")

    // … and with a new cache, the transcodes are refused with their estimates and the time left
    try FileManager.default.removeItem(atPath: fixture.cacheDirectory)
    let refused = try await fixture.runBinary(
      fixture.commonArguments + ["--budget", "8", "--no-poster", "--trace", payload])
    let plain = try refused.output()
    #expect(plain.attachments.map(\.identifier) == ["trim"], "\(refused.standardError)")
    let refusal = plain.trace?.first {
      $0.detail.contains("Not rescued: a transcode of 30 s would take about 8.6 s")
    }
    #expect(refusal?.detail.contains("unsupported_type") == true, "\(refused.standardError)")
    #expect(refusal?.detail.contains(" s are left") == true)
  }

  @Test("with the default 30 s budget a small WebM and 10 s of 640×360 are transcoded and delivered")
  func transcodeWithinBudgetDelivered() async throws {
    let fixture = try RunnerFixture("media-enough")
    defer { fixture.close() }
    let medium = try await Self.generate(in: fixture, "clip-360p-10s.avi", size: "640x360", seconds: 10)
    let payload = try fixture.write(
      "clips.json",
      Self.payload([("/media/webm-vp9.webm", "small"), (medium, "medium")]))

    // A process of its own: in this one, other suites' 720p transcodes may hold the media slots.
    let result = try await fixture.runBinary(fixture.commonArguments + ["--trace", payload])

    let output = try result.output()
    #expect(Set(output.attachments.map(\.identifier)) == ["small", "medium"], "\(result.standardError)")
    #expect(output.attachments.allSatisfy { $0.typeHint == "public.mpeg-4" && $0.path.hasSuffix(".mp4") })
    #expect(output.trace?.contains { $0.detail.contains("Not rescued") } == false)
  }

  /// Makes `name` (flat grey MPEG-4 part 2 at 30 fps in AVI, or VP8 in WebM for a `.webm` name:
  /// cheap to make, as dear to transcode as its size says) in a directory the fixture's server serves under `/big`; returns its path
  /// there.
  static func generate(in fixture: RunnerFixture, _ name: String, size: String, seconds: Int) async throws
    -> String
  {
    let directory = fixture.scratch + "/big"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    fixture.server.serveDirectory(prefix: "/big", directory: directory)
    let status = try await onOwnThread { () throws -> Int32 in
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
      process.arguments = [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "color=c=gray:size=\(size):rate=30:duration=\(seconds)",
      ]
      let codec =
        name.hasSuffix(".webm")
        ? ["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"] : ["-c:v", "mpeg4", "-q:v", "10"]
      process.arguments = (process.arguments ?? []) + codec + ["-threads", "1", directory + "/" + name]
      process.standardInput = FileHandle.nullDevice
      try process.runClosingChildEnds()
      process.blockUntilExit()
      process.closeStandardPipes()
      return process.terminationStatus
    }
    try #require(status == 0, "ffmpeg exited \(status)")
    return "/big/" + name
  }

  /// User plus system seconds from GNU time's `cpu %U %S` line.
  static func cpuSeconds(_ standardError: String) -> Double? {
    guard let line = standardError.split(separator: "\n").last(where: { $0.hasPrefix("cpu ") }) else {
      return nil
    }
    let parts = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    return parts.count == 2 ? parts[0] + parts[1] : nil
  }
}
