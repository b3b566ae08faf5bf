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
    "an animation libvips would convert for seconds more gets 504 at the deadline, and its worker spends under 0.5 s of CPU after the answer"
  )
  func workerStoppedAtDeadline() async throws {
    // Given the costliest animation the rescue's work bounds admit (950 frames of 256 × 256
    // noise: 62 MP, under the 64 MP animation budget and the 2,000-frame bound), which takes
    // libvips about 3.5 s of CPU to convert, served by the origin, and serve with a 1 s deadline
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
    let pid = serve.process.processIdentifier

    // When it is requested, with every libvips worker below serve noted while the request runs
    // (serve starts none before its first rescue, so each is this request's; watched from a
    // thread of its own, which a stalled cooperative pool does not hold back), and asked again
    // under a new URL, at most three times, when the 1 s passed before a worker had started (a
    // loaded machine can spend the second on the download)
    var answer: CurlAnswer?
    var workers: Set<Int32> = []
    var before: [Int32: Double] = [:]
    for attempt in 0..<3 where workers.isEmpty {
      let url = serve.url(
        try await serve.signed(origin.url("/slow.webp?attempt=\(attempt)"), keyFile: workspace.keyFile))
      let watching = Locked(true)
      let watcher = Task {
        await onOwnThread { () -> Set<Int32> in
          var seen: Set<Int32> = []
          while watching.withLock({ $0 }) {
            seen.formUnion(RescueWorkerServeTests.workers(of: pid, library: "libvips"))
            usleep(5_000)
          }
          return seen
        }
      }
      answer = try await Curl.get(url)
      before = Dictionary(
        uniqueKeysWithValues: RescueWorkerServeTests.workers(of: pid, library: "libvips").compactMap {
          worker in
          ProcStat.cpuSeconds(worker).map { (worker, $0) }
        })
      watching.withLock { $0 = false }
      workers = await watcher.value.union(before.keys)
    }
    let answered = try #require(answer)

    // Then the answer is 504 deadline_exceeded, from a rescue that had its worker
    #expect(answered.status == 504)
    #expect(answered.errorCode == "deadline_exceeded")
    #expect(!workers.isEmpty, "no libvips worker was seen below serve before the answer, in 3 tries")
    // and the worker was stopped at the deadline: from the answer on, it spends under 0.5 s of
    // CPU before it is gone (/proc/PID/stat, which counts CPU, not time, so a loaded machine
    // does not move it: killed, it spends none; not stopped, it converts on for the 2-3 s of CPU
    // the animation still needs, or until its CPU limit, the deadline on every core + 2 s)
    let after = try await Self.cpuSpent(by: before, until: 0.5)
    #expect(
      after.seconds < 0.5,
      "the rescue worker spent \(after.seconds) s of CPU after the 504 (still running: \(after.running))")
    // (a worker may live on as the pool's warm spare, waiting for its next job: it spends no CPU)
    let busy = after.running.filter { (ProcStat.cpuSeconds($0) ?? 0) > (before[$0] ?? 0) + 0.3 }
    #expect(busy.isEmpty, "rescue workers still converting when the watch ended: \(busy)")
  }

  /// The CPU seconds `workers` (each with its CPU at the start) spend from now on, watched
  /// every 50 ms until every one is gone (or a zombie), until they have spent `limit` (no need
  /// to watch longer), or for 60 s at most (a hang bound: a killed worker is gone in
  /// milliseconds); with the workers still running at the end.
  static func cpuSpent(
    by workers: [Int32: Double], until limit: Double
  ) async throws -> (seconds: Double, running: [Int32]) {
    var last = workers
    var spent = 0.0
    let start = ContinuousClock.now
    while !last.isEmpty, spent < limit, ContinuousClock.now - start < .seconds(60) {
      try await Task.sleep(for: .milliseconds(50))
      for (worker, seconds) in last {
        // A zombie's figure is its last; a process gone is not read again.
        guard let now = ProcStat.cpuSeconds(worker) else {
          last[worker] = nil
          continue
        }
        spent += max(0, now - seconds)
        last[worker] = ProcStat.state(worker) == "Z" ? nil : now
      }
    }
    return (spent, last.keys.sorted())
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

  @Test(
    "the 100,000-frame WebP with a 5 s deadline is refused within 5.5 s, an ordinary WebP asked while an animation holds a worker is rescued without waiting for it, and serve goes quiet within 1 s"
  )
  func othersRescuedMeanwhile() async throws {
    // Given the review's bomb (100,000 frames of 16 × 16), an animation that keeps libvips
    // busy for seconds (950 frames of 256 × 256 noise) and an ordinary WebP, served by the origin
    let scratch = NSTemporaryDirectory() + "bombs-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let frames = try #require(
      await ImageBombs.animatedWebP(vips: "black", side: 16, frames: 100_000, in: scratch))
    let slow = try #require(
      await ImageBombs.animatedWebP(
        vips: "gaussnoise", side: 256, options: "[Q=30]", frames: 950, in: scratch))
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/frames.webp", body: frames, contentType: "image/webp")
    origin.serve("/slow.webp", body: slow, contentType: "image/webp")
    origin.serve("/ordinary.webp", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp")
    let workspace = try Workspace()
    defer { workspace.remove() }
    // (the animation may take its time: serve's deadline is 20 s, and the bomb gets its own 5 s
    // through X-Deadline-Ms)
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", "20"])
    defer { serve.stop() }
    func url(_ path: String) async throws -> String {
      serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile))
    }
    let pid = serve.process.processIdentifier

    // When the animation is asked, and a worker below serve is seen converting it (its CPU in
    // /proc), the ordinary WebP and the bomb are asked at once (every URL signed beforehand)
    let (slowURL, ordinaryURL, bombURL) = (
      try await url("/slow.webp"), try await url("/ordinary.webp"), try await url("/frames.webp")
    )
    let slowAnswer = Task { try await Curl.get(slowURL) }
    let converting = await eventually(within: 20) {
      guard let tree = Self.treeCPUSeconds(pid), let own = ProcStat.cpuSeconds(pid) else { return false }
      return tree - own > 0.3
    }
    #expect(converting, "no worker was seen converting the animation")
    async let ordinaryAnswer = Curl.get(ordinaryURL)
    async let bombAnswer = Curl.get(bombURL, ["-H", "X-Deadline-Ms: 5000"])
    let (ordinary, bomb) = try await (ordinaryAnswer, bombAnswer)
    let animation = try await slowAnswer.value

    // Then the bomb is refused as too complex within 5.5 s of serve's own time
    #expect(bomb.status == 422)
    #expect(bomb.errorCode == "too_complex")
    let lines = serve.events.filter { $0["event"] == nil }
    func line(_ answer: CurlAnswer) -> Int? {
      lines.firstIndex { $0["requestId"] as? String == answer.header("X-Request-Id") }
    }
    let bombLine = try #require(line(bomb))
    let bombMilliseconds = try #require(lines[bombLine]["ms"] as? Double)
    #expect(bombMilliseconds <= 5500, "\(bombMilliseconds) ms")
    #expect([200, 504].contains(animation.status), "\(animation.status)")
    // and the ordinary WebP is rescued while the animation still holds its worker (answered
    // first, in the access log's order; with --rescue-workers 1 it waits for the animation's
    // worker, 3.4-3.8 s here, and is answered with it)
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
