import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` against a rescue bomb (issue #25, item 1): after the request is answered at
/// its deadline, the server stops spending CPU on it, measured from `/proc/PID/stat`.
@Suite("serve --rescue: bombs", .threadOfItsOwn)
struct RescueBombTests {
  /// User plus system CPU time of `pid` so far, in seconds (`/proc/PID/stat` fields 14 and 15,
  /// in clock ticks).
  static func cpuSeconds(_ pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return nil }
    // Fields after the command name (which may hold spaces), from field 3 on.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
      return nil
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  @Test(
    "an animation that takes libvips seconds gets 504 at the deadline, and serve's CPU then goes quiet")
  func quietAfterDeadline() async throws {
    // Given an animated WebP within every rescue budget that takes libvips about 3.6 s to
    // convert (950 frames of 256 × 256 noise; before the work bounds, the GIF of all 62 MP took
    // some 18 s), served by the origin
    let scratch = NSTemporaryDirectory() + "bomb-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let made = await ImageBombs.animatedWebP(
      vips: "gaussnoise", side: 256, options: "[Q=30]", frames: 950, in: scratch)
    let bomb = try #require(made)
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/slow.webp", body: bomb, contentType: "image/webp")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", "1"])
    defer { serve.stop() }

    // When it is requested
    let answer = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/slow.webp"), keyFile: workspace.keyFile)))

    // Then the answer is 504 deadline_exceeded
    #expect(answer.status == 504)
    #expect(answer.errorCode == "deadline_exceeded")
    // and, once the rescue has stopped (within 10 s of the answer: libvips checks its kill flag
    // between strips, but under the serve suite's parallel load a kill early in the save was
    // used up without stopping it, and the conversion ran to its end about 5 s later; the work
    // budgets bound it), the server spends under 0.2 s of CPU in the next second (a libvips
    // still converting would spend about 1 s of it on each busy core)
    let pid = serve.process.processIdentifier
    var quiet = false
    for _ in 0..<10 where !quiet {
      let before = try #require(Self.cpuSeconds(pid))
      try await Task.sleep(for: .seconds(1))
      let after = try #require(Self.cpuSeconds(pid))
      quiet = after - before < 0.2
    }
    #expect(quiet, "serve kept spending CPU for 10 s after the 504")
  }
}
