import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` with its decoders in worker processes (issue #36): a transcode nobody waits
/// for any more is stopped, and serve answers on.
@Suite("serve --rescue: worker processes", .rescueTurn, .threadOfItsOwn)
struct RescueWorkerServeTests {
  /// The live rescue workers below `pid` loading `library` (`/proc`: their parent and command).
  static func workers(of pid: Int32, library: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { child in
      guard let fields = ProcStat.fields(child), fields.count > 1, fields[0] != "Z", Int32(fields[1]) == pid,
        let command = FileManager.default.contents(atPath: "/proc/\(child)/cmdline")
      else { return false }
      return String(decoding: command, as: UTF8.self).contains("--preload\0\(library)")
    }
  }

  /// The FFmpeg worker below `pid` seen spending CPU (over 0.3 s, from `/proc`): a transcode
  /// under way; `nil` when none is seen within 30 s.
  static func transcodingWorker(of pid: Int32) async -> Int32? {
    let started = ContinuousClock.now
    while ContinuousClock.now - started < .seconds(30) {
      if let busy = workers(of: pid, library: "ffmpeg").first(where: { (ProcStat.cpuSeconds($0) ?? 0) > 0.3 })
      {
        return busy
      }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return nil
  }

  /// A 20 s 1280×720 MPEG-4 AVI made by ffmpeg in `scratch` (transcoded to H.264 it takes
  /// seconds of CPU).
  static func longAVI(in scratch: String) async throws -> [UInt8] {
    let source = scratch + "/long.avi"
    let made = try await Run.process(
      "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=1280x720:rate=15", "-t",
        "20",
        "-c:v", "mpeg4", "-q:v", "8", source,
      ])
    try #require(made.status == 0, "ffmpeg failed")
    return Array(try Data(contentsOf: URL(fileURLWithPath: source)))
  }

  @Test(
    "a worker that dies mid-transcode: the client gets the typed refusal, nothing is left behind, serve answers the next request, a new worker takes the next job"
  )
  func crashedWorkerIsOneRefusal() async throws {
    // Given the 720p AVI and a small VP9 WebM behind serve --rescue
    let scratch = NSTemporaryDirectory() + "segv-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/long.avi", body: try await Self.longAVI(in: scratch), contentType: "video/x-msvideo")
    origin.serve("/small.webm", body: try Media.bytes("webm-vp9.webm"), contentType: "video/webm")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--deadline", "60"])
    defer { serve.stop() }
    let pid = serve.process.processIdentifier
    let long = serve.url(try await serve.signed(origin.url("/long.avi"), keyFile: workspace.keyFile))
    let small = serve.url(try await serve.signed(origin.url("/small.webm"), keyFile: workspace.keyFile))

    // When the transcode is seen under way (a worker spending CPU) and the worker dies of a
    // signal (a decoder's crash; a worker is its PID namespace's process 1, which ignores a
    // SIGSEGV another process sends, so it is killed with SIGKILL: the same death to its parent)
    let answer = Task { try await Curl.get(long) }
    let crashed = try #require(await Self.transcodingWorker(of: pid), "no transcode was seen")
    kill(crashed, SIGKILL)
    let refused = try await answer.value

    // Then the client gets the source's refusal with why it was not rescued
    #expect(refused.status == 422, "\(refused.status)")
    #expect(refused.errorCode == "unsupported_type")
    let message = (refused.json?["error"] as? [String: Any])?["message"] as? String ?? ""
    // (a sanitizer's shadow memory makes a worker's address space read as at its ceiling, so
    // there the death is put down to memory)
    #expect(
      message.contains("Not rescued: the decoder failed")
        || SandboxServeTests.sanitized
          && message.contains("Not rescued: it needed more memory"),
      "\(message)")
    #expect(message.contains("signal 9"), "\(message)")
    // and nothing is left behind: no body file, and the crashed worker reaped
    let temporary = workspace.cache + "/v3/tmp"
    #expect(((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).isEmpty)
    #expect(
      await eventually(within: 30) { ProcStat.fields(crashed) == nil }, "the crashed worker was not reaped")
    // and serve answers the next request, whose rescue a new worker does
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)
    let next = try await Curl.get(small)
    #expect(next.status == 200, "\(next.status) \(String(decoding: next.body.prefix(300), as: UTF8.self))")
    #expect(next.header("Content-Type") == "video/mp4")
    #expect(Self.workers(of: pid, library: "ffmpeg").allSatisfy { $0 != crashed })
  }

  @Test(
    "a client that hangs up during a transcode: its worker is gone within 0.5 s, and serve answers the next request"
  )
  func hangUpStopsTheTranscode() async throws {
    // Given a 20 s 720p MPEG-4 AVI (transcoded to H.264: seconds of CPU) behind serve --rescue
    let scratch = NSTemporaryDirectory() + "hangup-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/long.avi", body: try await Self.longAVI(in: scratch), contentType: "video/x-msvideo")
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
    let transcoding = try #require(await Self.transcodingWorker(of: pid), "no transcode was seen")

    // and the client hangs up
    client = nil
    let hungUp = ContinuousClock.now

    // Then the worker is gone (killed, reaped or being reaped) within 0.5 s: it is never seen
    // alive later than that. (Judged by the last look that saw it, taken when that look began:
    // on a loaded machine the looks themselves can be late, which says nothing of the worker.)
    var gone = false
    var lastSeenAlive = Duration.zero
    while !gone, ContinuousClock.now - hungUp < .seconds(5) {
      let looked = ContinuousClock.now - hungUp
      gone = !Self.workers(of: pid, library: "ffmpeg").contains(transcoding)
      if !gone {
        lastSeenAlive = looked
        try await Task.sleep(for: .milliseconds(5))
      }
    }
    #expect(
      gone && lastSeenAlive < .milliseconds(500),
      "the transcode was seen running \(lastSeenAlive) after its client hung up")
    // and serve answers the next request
    let info = try await Curl.get(serve.url("/healthz"))
    #expect(info.status == 200)
  }

  /// A `/proc/PID/status` figure in KiB (`VmRSS`, `VmHWM`), or `nil`.
  static func memory(_ pid: Int32, _ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return nil }
    return line.split(separator: " ").compactMap { Int($0) }.first
  }

  /// The review's memory bombs: 40 VP9 tracks of 4096×4096 in one WebM, and a WebM whose
  /// container and VP9 key frames declare 16000×16000 (a 256×256 clip, its sizes rewritten: a
  /// real frame that large cannot be encoded here).
  static func memoryBombs(in directory: String) async throws -> (tracks: String, pixels: String) {
    let one = directory + "/one.webm"
    try await Self.ffmpeg([
      "-f", "lavfi", "-i", "color=black:s=4096x4096:r=25:d=0.04", "-c:v", "libvpx-vp9", "-deadline",
      "realtime",
      "-cpu-used", "8", "-b:v", "50k", one,
    ])
    let tracks = directory + "/forty-tracks.webm"
    try await Self.ffmpeg(
      ["-i", one] + Array(repeating: ["-map", "0:v"], count: 40).flatMap { $0 } + ["-c", "copy", tracks])
    let small = directory + "/small.webm"
    try await Self.ffmpeg([
      "-f", "lavfi", "-i", "testsrc=size=256x256:rate=5", "-t", "2", "-c:v", "libvpx-vp9", "-deadline",
      "realtime",
      "-cpu-used", "8", small,
    ])
    var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: small)))
    // Matroska's PixelWidth (B0) and PixelHeight (BA), two-byte values 256 → 16000
    for id: UInt8 in [0xB0, 0xBA] {
      let pattern: [UInt8] = [id, 0x82, 0x01, 0x00]
      guard let at = (0..<bytes.count - 3).first(where: { Array(bytes[$0..<$0 + 4]) == pattern }) else {
        throw RescueBombError.notFound("the Matroska size element \(id)")
      }
      bytes[at + 2] = 0x3E
      bytes[at + 3] = 0x80
    }
    // each VP9 key frame: the sync code 49 83 42, 4 bits of colour (profile 0), then width - 1
    // and height - 1 in 16 bits each
    var patched = 0
    var index = 0
    while index + 8 < bytes.count {
      if bytes[index] == 0x49, bytes[index + 1] == 0x83, bytes[index + 2] == 0x42 {
        var bit = (index + 3) * 8 + 4
        for value in [15999, 15999] {
          for shift in (0..<16).reversed() {
            let mask = UInt8(0x80 >> (bit % 8))
            if (value >> shift) & 1 == 1 { bytes[bit / 8] |= mask } else { bytes[bit / 8] &= ~mask }
            bit += 1
          }
        }
        patched += 1
        index += 3
      } else {
        index += 1
      }
    }
    guard patched > 0 else { throw RescueBombError.notFound("a VP9 key frame") }
    let pixels = directory + "/16000.webm"
    try Data(bytes).write(to: URL(fileURLWithPath: pixels))
    return (tracks, pixels)
  }

  enum RescueBombError: Error { case notFound(String) }

  /// Runs the `ffmpeg` command (quiet), requiring it to succeed.
  static func ffmpeg(_ arguments: [String]) async throws {
    let run = try await Run.process("/usr/bin/ffmpeg", ["-nostdin", "-loglevel", "error", "-y"] + arguments)
    try #require(run.status == 0, "ffmpeg \(arguments.joined(separator: " ")): \(run.stderr)")
  }

  @Test(
    "the 40-track and the 16000×16000 WebM are refused within 2.5 s, and serve's own memory grows by under 16 MiB"
  )
  func memoryBombsStayOutOfServe() async throws {
    let scratch = NSTemporaryDirectory() + "membomb-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let (tracks, pixels) = try await Self.memoryBombs(in: scratch)
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve(
      "/tracks.webm", body: Array(try Data(contentsOf: URL(fileURLWithPath: tracks))),
      contentType: "video/webm")
    origin.serve(
      "/pixels.webm", body: Array(try Data(contentsOf: URL(fileURLWithPath: pixels))),
      contentType: "video/webm")
    origin.serve(
      "/clip.webm",
      body: Array(try Data(contentsOf: URL(fileURLWithPath: Media.directory + "/webm-vp9.webm"))),
      contentType: "video/webm")
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--rescue"])
    defer { serve.stop() }
    let pid = serve.process.processIdentifier

    // Given serve warmed up by an ordinary media rescue (libcurl, libmagic and the worker pool
    // in use), its resident memory then, and its peak reset
    let warm = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/clip.webm"), keyFile: workspace.keyFile)))
    #expect(warm.status == 200)
    let baseline = try #require(Self.memory(pid, "VmRSS"))
    try? "5".write(toFile: "/proc/\(pid)/clear_refs", atomically: false, encoding: .utf8)

    // When each bomb is asked for, each is refused within 2.5 s, by serve's own account (its
    // access line's `ms`, from the request's arrival to the answer's end: curl's start and the
    // test's reading of the answer are no part of it on a loaded machine)
    for name in ["/tracks.webm", "/pixels.webm"] {
      let path = try await serve.signed(origin.url(name), keyFile: workspace.keyFile)
      let answered = AccessLogTests.lines(serve).count
      let answer = try await Curl.get(serve.url(path))
      #expect(answer.status == 422, "\(name): \(answer.status) \(answer.errorCode ?? "")")
      #expect(
        ["too_complex", "too_many_pixels"].contains(answer.errorCode ?? ""),
        "\(name): \(answer.errorCode ?? "")")
      #expect(await eventually(within: 30) { AccessLogTests.lines(serve).count > answered })
      let line = AccessLogTests.lines(serve).last { $0["status"] as? Int == 422 }
      let took = try #require(line?["ms"] as? Double, "no access line for \(name)")
      #expect(took < 2500, "\(name) answered after \(took) ms")
    }
    // Then serve's own peak memory stayed within 16 MiB of where it was (the decoders ran, if
    // at all, in a worker)
    let peak = try #require(Self.memory(pid, "VmHWM"))
    #expect(peak - baseline < 16 * 1024, "serve grew from \(baseline) KiB to a peak of \(peak) KiB")
  }
}
