import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` with its decoders in worker processes (issue #36): a transcode nobody waits
/// for any more is stopped, and serve answers on.
@Suite("serve --rescue: worker processes", .threadOfItsOwn)
struct RescueWorkerServeTests {
  /// The live rescue workers below `pid` loading `library` (`/proc`: their parent and command).
  static func workers(of pid: Int32, library: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { child in
      guard let text = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
      else { return false }
      let fields = text[text.index(after: close)...].split(separator: " ")
      guard fields.count > 1, fields[0] != "Z", Int32(fields[1]) == pid,
        let command = FileManager.default.contents(atPath: "/proc/\(child)/cmdline")
      else { return false }
      return String(decoding: command, as: UTF8.self).contains("--preload\0\(library)")
    }
  }

  @Test(
    "a client that hangs up during a transcode: its worker is gone within 0.5 s, and serve answers the next request"
  )
  func hangUpStopsTheTranscode() async throws {
    // Given a 40 s 720p MPEG-4 AVI (transcoded to H.264: seconds of CPU) behind serve --rescue
    let scratch = NSTemporaryDirectory() + "hangup-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let source = scratch + "/long.avi"
    let made = try await Run.process(
      "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=30", "-t",
        "40",
        "-c:v", "mpeg4", "-q:v", "8", source,
      ])
    try #require(made.status == 0, "ffmpeg failed")
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve(
      "/long.avi", body: Array(try Data(contentsOf: URL(fileURLWithPath: source))),
      contentType: "video/x-msvideo")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", "60"])
    defer { serve.stop() }
    let pid = serve.process.processIdentifier
    let path = try await serve.signed(origin.url("/long.avi"), keyFile: workspace.keyFile)

    // When a client asks for it and its transcode is seen under way (a worker spending CPU)
    var client = RawConnection(port: serve.port)
    try #require(client != nil)
    client?.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    var worker: Int32?
    let started = ContinuousClock.now
    while worker == nil, ContinuousClock.now - started < .seconds(30) {
      worker = Self.workers(of: pid, library: "ffmpeg").first {
        (RescueBombTests.cpuSeconds($0) ?? 0) > 0.3
      }
      if worker == nil { try await Task.sleep(for: .milliseconds(10)) }
    }
    let transcoding = try #require(worker, "no transcode was seen")

    // and the client hangs up
    client = nil
    let hungUp = ContinuousClock.now

    // Then the worker is gone (killed, reaped or being reaped) within 0.5 s
    var gone = false
    while !gone, ContinuousClock.now - hungUp < .seconds(5) {
      gone = !Self.workers(of: pid, library: "ffmpeg").contains(transcoding)
      if !gone { try await Task.sleep(for: .milliseconds(5)) }
    }
    let took = ContinuousClock.now - hungUp
    #expect(gone && took < .milliseconds(500), "the transcode ran on \(took) after its client hung up")
    // and serve answers the next request
    let info = try await Curl.get(serve.url("/healthz"))
    #expect(info.status == 200)
  }
}
