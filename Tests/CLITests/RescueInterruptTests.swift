import Foundation
import TestSupport
import TestTraits
import Testing

/// Ctrl-C during `attachkit rescue` (issue 54, item 1): the rescue is cancelled as a fetch is.
/// Before, the command died of the signal at once, leaving its worker transcoding and a partial
/// `--output` file behind.
@Suite("CLI: Ctrl-C during a rescue", .serialized, .threadOfItsOwn)
struct RescueInterruptTests {
  @Test("Ctrl-C during a transcode: exit 130, the worker gone within 0.5 s, no output left")
  func interruptedTranscode() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = scratch.path + "/clip.webm"
    let made = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
        "testsrc2=size=640x360:rate=30:duration=10",
        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "500k", source,
      ])
    try #require(made.status == 0, "ffmpeg: \(made.stderr)")
    let output = scratch.path + "/clip.mp4"
    let process = try CLI.spawn(
      ["rescue", "--json", "--deadline", "60", source, "--output", output], stdout: scratch.path + "/out",
      stderr: scratch.path + "/err")
    let pid = process.processIdentifier

    // Observed, not assumed: a worker of the command is transcoding (it has spent CPU). It is
    // then stopped, so that however fast this machine is, the rescue cannot end before Ctrl-C.
    var worker: pid_t?
    let seen = ContinuousClock.now + .seconds(30)
    while ContinuousClock.now < seen, process.isRunning, worker == nil {
      worker = Self.children(of: pid).first { (ProcStat.cpuSeconds($0) ?? 0) > 0.05 }
      if worker == nil { try await Task.sleep(for: .milliseconds(5)) }
    }
    let transcoding = try #require(worker, "no worker of the rescue was seen spending CPU")
    kill(transcoding, SIGSTOP)

    let took = await CLI.interrupt(process)
    #expect(process.terminationStatus == 130)
    #expect(took < 1.0, "exited \(took) s after Ctrl-C")
    // The worker is killed by the command (a stopped process still dies of SIGKILL), not left
    // to its parent-death signal; a zombie not yet reaped by init counts as gone.
    let gone = ContinuousClock.now + .milliseconds(500)
    while ContinuousClock.now < gone, Self.isAlive(transcoding) {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(!Self.isAlive(transcoding), "the worker outlived the command by 0.5 s")
    #expect(!FileManager.default.fileExists(atPath: output), "a partial output was left")
    let line = CLI.jsonLines(ofFile: scratch.path + "/out").first
    #expect(
      (line?["error"] as? [String: Any])?["code"] as? String == "cancelled", "\(String(describing: line))")
  }

  /// The processes whose parent is `pid`.
  static func children(of pid: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { pid_t($0) }.filter { child in
      guard let fields = ProcStat.fields(child), fields.count > 1 else { return false }
      return pid_t(fields[1]) == pid
    }
  }

  /// Whether `pid` is running (a zombie is not).
  static func isAlive(_ pid: pid_t) -> Bool {
    guard let state = ProcStat.state(pid) else { return false }
    return state != "Z" && state != "X"
  }
}
