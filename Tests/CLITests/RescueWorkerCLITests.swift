import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit rescue` with its decoders in a worker process (issue #36): the review's frame
/// bomb is answered within its deadline, and a quickly refused rescue never ends the command by
/// a signal (it once died of SIGSEGV about one run in ten, a library still loading at `exit`).
@Suite("CLI: rescue workers", .threadOfItsOwn)
struct RescueWorkerCLITests {
  /// An animated WebP of `frames` frames of 16×16, each the same 24-byte VP8 key frame (the
  /// review's bomb: 100,000 frames in 5.6 MB).
  static func frameBomb(frames: Int) -> [UInt8] {
    func le(_ value: Int, _ count: Int) -> [UInt8] {
      (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
    let keyFrame: [UInt8] = [
      0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a, 0x10, 0x00, 0x10, 0x00, 0x02, 0x00, 0x34, 0x25, 0xa4, 0x00, 0x03,
      0x70,
      0x00, 0xfe, 0xfb, 0xfd, 0x50, 0x00,
    ]
    let vp8 = Array("VP8 ".utf8) + le(keyFrame.count, 4) + keyFrame
    // ANMF: x, y, width-1, height-1 (3 bytes each), duration (3), flags (1), then the frame.
    let payload = le(0, 3) + le(0, 3) + le(15, 3) + le(15, 3) + le(100, 3) + [0] + vp8
    let frame = Array("ANMF".utf8) + le(payload.count, 4) + payload
    let vp8x = Array("VP8X".utf8) + le(10, 4) + [0x02, 0, 0, 0] + le(15, 3) + le(15, 3)
    let anim = Array("ANIM".utf8) + le(6, 4) + [0, 0, 0, 0, 0, 0]
    var body = Array("WEBP".utf8) + vp8x + anim
    body.reserveCapacity(body.count + frame.count * frames)
    for _ in 0..<frames { body += frame }
    return Array("RIFF".utf8) + le(body.count, 4) + body
  }

  @Test("the 100,000-frame WebP with --deadline 5: answered within 5.5 s, refused as too complex")
  func frameBombWithinDeadline() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = scratch.path + "/bomb.webp"
    try Data(Self.frameBomb(frames: 100_000)).write(to: URL(fileURLWithPath: source))

    let result = try await CLI.run([
      "rescue", "--json", "--deadline", "5", source, "-o", scratch.path + "/out",
    ])

    // (the command's own time, from its start: under a loaded parallel run, the process's start
    // and exit can queue for seconds that are not the rescue's)
    let took = (result.jsonLines.first?["timings"] as? [String: Any])?["totalMs"] as? Double
    #expect(took.map { $0 < 5500 } == true, "answered after \(String(describing: took)) ms")
    #expect(!result.signalled)
    let error = result.jsonLines.first?["error"] as? [String: Any]
    #expect(error?["code"] as? String == "too_complex", "\(result.stdout)")
    #expect((error?["message"] as? String)?.contains("100000 frames") == true, "\(result.stdout)")
    #expect(!FileManager.default.fileExists(atPath: scratch.path + "/out"))
  }

  @Test("40 runs of attachkit rescue on a quickly refused WebP: none dies by a signal")
  func quickRefusalsNeverCrash() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = scratch.path + "/bomb.webp"
    try Data(Self.frameBomb(frames: 2_500)).write(to: URL(fileURLWithPath: source))
    var outcomes: [String] = []
    for run in 0..<40 {
      let result = try await CLI.run(["rescue", "--json", source, "-o", scratch.path + "/out-\(run)"])
      if result.signalled || result.status != 1 {
        outcomes.append(
          "run \(run): status \(result.status), signalled \(result.signalled): \(result.stderr)")
      }
    }
    #expect(outcomes.isEmpty, "\(outcomes)")
  }

  @Test("attachkit rescue improves an H.264 MP4 whose only audio is DTS as fetch --rescue does: AAC audio")
  func improvesSilentMovie() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let output = scratch.path + "/out.mp4"
    let result = try await CLI.run(["rescue", "--json", Media.directory + "/mp4-h264-dts.mp4", "-o", output])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let line = try #require(result.jsonLines.first)
    let rescued = line["rescued"] as? [String: Any]
    #expect(rescued?["by"] as? String == "media", "\(result.stdout)")
    #expect((line["codecs"] as? [String])?.contains("mp4a.40.2") == true, "\(result.stdout)")
    // what was written plays with sound: the validator reads AAC in it
    let check = try await CLI.run(["validate", "--json", output])
    #expect((check.jsonLines.first?["codecs"] as? [String])?.contains("mp4a.40.2") == true, "\(check.stdout)")
  }

  @Test(
    "--rescue-memory and --rescue-workers reach the workers: a ceiling too small for libvips is named in the refusal"
  )
  func workerOptions() async throws {
    // Given a WebP on the origin
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/p.webp", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp")
    let scratch = try Scratch()
    defer { scratch.remove() }
    func fetch(_ options: [String], cache: String) async throws -> [String: Any]? {
      let run = try await CLI.run(
        [
          "fetch", "--json", "--allow-private-networks", "--rescue", "--cache-dir",
          scratch.path + "/" + cache,
        ]
          + options + [server.url("/p.webp")])
      return run.jsonLines.first
    }

    // When it is fetched with workers held to 64 MiB (libvips cannot even be mapped), and with
    // one worker of the default size
    let starved = try await fetch(["--rescue-memory", "64MiB"], cache: "starved")
    let single = try await fetch(["--rescue-workers", "1"], cache: "single")

    // Then the first refusal says the ceiling stopped it (not that libvips is missing), and the
    // second is rescued
    let error = starved?["error"] as? [String: Any]
    let message = error?["message"] as? String ?? ""
    #expect(
      message.contains("needed more memory than the rescue allows (64 MiB)"), "\(String(describing: starved))"
    )
    #expect(single?["outcome"] as? String == "accepted", "\(String(describing: single))")
    #expect(single?["type"] as? String == "jpeg")
  }
}
