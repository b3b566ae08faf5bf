import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` against a rescue bomb (issue #25, item 1): after the request is answered at
/// its deadline, the server stops spending CPU on it, measured from `/proc/PID/stat`.
@Suite("serve --rescue: bombs", .rescueTurn, .threadOfItsOwn)
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
    "an animation whose worker cannot finish before the deadline gets 504 at the deadline, and that worker is killed"
  )
  func workerStoppedAtDeadline() async throws {
    // Given the costliest animation the rescue's work bounds admit (950 frames of 256 × 256
    // noise: 62 MP, under the 64 MP animation budget and the 2,000-frame bound; seconds of
    // libvips CPU here, long enough to be seen converting on a far faster machine), served by
    // the origin, and serve with a 3 s deadline
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
    let seconds = 3
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", String(seconds)])
    defer { serve.stop() }
    let pid = serve.process.processIdentifier

    // When it is requested, and the libvips worker below serve that holds the job's output is
    // stopped (SIGSTOP) as soon as it is seen, so that it cannot finish however fast this
    // machine is (asked again under a new URL, at most three times, when the deadline passed
    // before a worker had the job: a loaded machine can spend it on the download)
    var answer: CurlAnswer?
    var worker: Int32?
    for attempt in 0..<3 where worker == nil {
      let url = serve.url(
        try await serve.signed(origin.url("/slow.webp?attempt=\(attempt)"), keyFile: workspace.keyFile))
      async let stopped = StoppedWorkers.stopWorking(
        below: pid, library: "libvips", outputUnder: workspace.path, within: .seconds(seconds))
      answer = try await Curl.get(url)
      worker = await stopped
    }
    let answered = try #require(answer)
    let stopped = try #require(
      worker, "no libvips worker below serve had the job before the deadline, in 3 tries")
    defer { kill(stopped, SIGCONT) }

    // Then the answer is 504 deadline_exceeded
    #expect(answered.status == 504)
    #expect(answered.errorCode == "deadline_exceeded")
    // and the worker was killed at the deadline: stopped, it can only be gone if serve killed
    // it (not killed, it would convert on once continued, for seconds of CPU)
    #expect(await StoppedWorkers.isGone(stopped), "the stopped rescue worker was not killed at the deadline")
    // and no worker below serve holds the job any more (a warm spare waiting for its next job
    // holds none)
    let holding = StoppedWorkers.workers(of: pid, library: "libvips").filter {
      StoppedWorkers.outputBytes(of: $0, under: workspace.path) != nil
    }
    #expect(holding.isEmpty, "rescue workers still converting after the 504: \(holding)")
  }

  /// The 0.5 s windows in which serve's process tree spends under 0.1 s of CPU, watched for up
  /// to `within`: whether one came.
  static func goesQuiet(_ pid: Int32, within: Duration) async throws -> Bool {
    let start = ContinuousClock.now
    while ContinuousClock.now - start < within {
      let before = try #require(treeCPUSeconds(pid))
      try await Task.sleep(for: .milliseconds(500))
      let after = try #require(treeCPUSeconds(pid))
      if after - before < 0.1 { return true }
    }
    return false
  }

  /// An origin serving the review's bomb (`/frames.webp`), the slow animation (`/slow.webp`) and
  /// an ordinary WebP (`/ordinary.webp`).
  static func bombOrigin() async throws -> TestHTTPServer {
    let scratch = NSTemporaryDirectory() + "bombs-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let frames = try #require(
      await ImageBombs.animatedWebP(vips: "black", side: 16, frames: 100_000, in: scratch))
    let slow = try #require(
      await ImageBombs.animatedWebP(
        vips: "gaussnoise", side: 256, options: "[Q=30]", frames: 950, in: scratch))
    let origin = try TestHTTPServer.start()
    origin.serve("/frames.webp", body: frames, contentType: "image/webp")
    origin.serve("/slow.webp", body: slow, contentType: "image/webp")
    origin.serve("/ordinary.webp", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp")
    return origin
  }

  /// Whether serve's access log has a line for each of `answers` within 30 s: each line follows
  /// its answer.
  static func logged(_ answers: [CurlAnswer], by serve: ServeProcess) async -> Bool {
    await eventually(within: 30) {
      let ids = Set(serve.events.compactMap { $0["requestId"] as? String })
      return answers.allSatisfy { ids.contains($0.header("X-Request-Id") ?? "") }
    }
  }

  @Test(
    "the 100,000-frame WebP with a 5 s deadline is refused as too complex by it, an ordinary WebP asked while an animation holds a worker is rescued without waiting for it, and serve goes quiet within 1 s"
  )
  func othersRescuedMeanwhile() async throws {
    // Given the review's bomb (100,000 frames of 16 × 16), an animation that keeps libvips
    // busy long enough to be seen converting (950 frames of 256 × 256 noise) and an ordinary
    // WebP, served by the origin
    let origin = try await Self.bombOrigin()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    // (serve's deadline, 10 s, is the animation's: its worker is stopped, so it is answered 504
    // then; the bomb gets its own 5 s through X-Deadline-Ms)
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", "10"])
    defer { serve.stop() }
    func url(_ path: String) async throws -> String {
      serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile))
    }
    let pid = serve.process.processIdentifier

    // When the animation is asked, and the worker below serve that has its job is stopped
    // (SIGSTOP) as soon as it is seen, so that it holds its worker however fast this machine
    // is, the ordinary WebP and the bomb are asked at once (every URL signed beforehand)
    let (slowURL, ordinaryURL, bombURL) = (
      try await url("/slow.webp"), try await url("/ordinary.webp"), try await url("/frames.webp")
    )
    let slowAnswer = Task { try await Curl.get(slowURL) }
    let held = await StoppedWorkers.stopWorking(below: pid, library: "libvips", outputUnder: workspace.path)
    let worker = try #require(held, "no worker was seen with the animation's job")
    defer { kill(worker, SIGCONT) }
    async let ordinaryAnswer = Curl.get(ordinaryURL)
    async let bombAnswer = Curl.get(bombURL, ["-H", "X-Deadline-Ms: 5000"])
    let (ordinary, bomb) = try await (ordinaryAnswer, bombAnswer)
    let animation = try await slowAnswer.value

    // Then the bomb is refused as too complex, by its deadline (serve's own time, in its log)
    #expect(bomb.status == 422)
    #expect(bomb.errorCode == "too_complex")
    #expect(await Self.logged([bomb, ordinary, animation], by: serve), "\(serve.log)")
    let lines = serve.events.filter { $0["event"] == nil }
    func line(_ answer: CurlAnswer) -> Int? {
      lines.firstIndex { $0["requestId"] as? String == answer.header("X-Request-Id") }
    }
    let bombLine = try #require(line(bomb))
    let bombMilliseconds = try #require(lines[bombLine]["ms"] as? Double)
    #expect(bombMilliseconds < 5000 + deadlineMarginSeconds * 1000, "\(bombMilliseconds) ms")
    // and the stopped animation is answered at its deadline
    #expect(animation.status == 504, "\(animation.status)")
    // and the ordinary WebP is rescued while the animation still holds its worker (answered
    // first, in the access log's order; with --rescue-workers 1 it would wait for the
    // animation's worker, until its deadline, and be answered after it)
    let ordinaryLine = try #require(line(ordinary))
    let animationLine = try #require(line(animation))
    #expect(ordinary.status == 200)
    #expect(ordinary.header("Content-Type") == "image/jpeg")
    #expect(
      ordinaryLine < animationLine,
      "the ordinary WebP waited for the animation: \(lines[ordinaryLine]) after \(lines[animationLine])")
    // and serve with its workers goes quiet within 1 s of the last answer
    #expect(try await Self.goesQuiet(pid, within: .seconds(1)), "serve kept spending CPU after its answers")
  }
}
