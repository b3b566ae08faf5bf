import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` against a rescue bomb (issue #25, item 1): after the request is answered at
/// its deadline, the server stops spending CPU on it, measured from `/proc/PID/stat`.
@Suite("serve --rescue: bombs", .threadOfItsOwn)
struct RescueBombTests {
  /// The CPU seconds of `pid` and of every live process below it (its rescue workers), from
  /// `/proc/*/stat`: a rescue runs in a worker, whose CPU serve's own figure does not hold.
  static func treeCPUSeconds(_ pid: Int32) -> Double? {
    var parents: [Int32: Int32] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
      guard let child = Int32(entry), let fields = ProcStat.fields(child) else { continue }
      if fields.count > 1, let parent = Int32(fields[1]) { parents[child] = parent }
    }
    func descends(_ process: Int32) -> Bool {
      var current = process
      for _ in 0..<64 {
        guard let parent = parents[current] else { return false }
        if parent == pid { return true }
        current = parent
      }
      return false
    }
    guard let own = ProcStat.cpuSeconds(pid) else { return nil }
    return parents.keys.filter(descends).compactMap(ProcStat.cpuSeconds).reduce(own, +)
  }

  @Test(
    "an animation that takes libvips seconds gets 504 at the deadline, and serve with its workers goes quiet within 1.5 s"
  )
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
    // and serve with its rescue workers goes quiet at once: the worker was killed at the
    // deadline, so within 1.5 s of the answer the whole process tree spends under 0.1 s of CPU
    // in half a second (a libvips still converting would spend about 0.5 s on each busy core;
    // with the worker not killed, this fails)
    let pid = serve.process.processIdentifier
    let answered = ContinuousClock.now
    var quiet = false
    while !quiet, ContinuousClock.now - answered < .milliseconds(1500) {
      let before = try #require(Self.treeCPUSeconds(pid))
      try await Task.sleep(for: .milliseconds(500))
      let after = try #require(Self.treeCPUSeconds(pid))
      quiet = after - before < 0.1
    }
    #expect(quiet, "serve and its workers kept spending CPU for 1.5 s after the 504")
  }
}
