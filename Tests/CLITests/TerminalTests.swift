import Foundation
import TestSupport
import TestTraits
import Testing

/// What a person at a terminal sees: the progress bar on a pseudo-terminal (and not on a
/// pipe), NO_COLOR, and Ctrl-C.
@Suite("attachkit at a terminal", .serialized, .threadOfItsOwn)
struct TerminalTests {
  /// Runs a shell command line under `script`, which gives it a pseudo-terminal, and returns
  /// everything it wrote to the terminal (waiting on a thread of its own).
  static func runOnTerminal(_ command: String, environment: [String: String]) async throws -> String {
    try await onOwnThread { () throws -> String in
      try blockingRunOnTerminal(command, environment: environment)
    }
  }

  private static func blockingRunOnTerminal(_ command: String, environment: [String: String]) throws
    -> String
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qfec", command, "/dev/null"]
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = nil  // only what the test asks for
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let out = Pipe.closingOnExec()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.runClosingChildEnds()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.blockUntilExit()
    process.closeStandardPipes()
    return String(decoding: data, as: UTF8.self)
  }

  @Test(
    "prefetch draws a progress bar on a terminal, in colour unless NO_COLOR, and none on a pipe or with TERM=dumb"
  )
  func progressBar() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let names = ["png-rgba.png", "gif-static.gif", "wav-pcm16.wav", "mp3-no-tag.mp3"]
    for name in names { server.serve("/\(name)", body: try Media.bytes(name)) }
    let list = scratch.path + "/urls.txt"
    try names.map { server.url("/\($0)") }.joined(separator: "\n").write(
      toFile: list, atomically: true, encoding: .utf8)
    let base = "'\(CLI.attachkit)' prefetch --cache-dir '\(scratch.path)/c"
    let env = ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "1"]

    var colour = env
    colour["NO_COLOR"] = nil
    let terminal = try await Self.runOnTerminal(
      "\(base)1' '\(list)'", environment: colour.merging(["TERM": "xterm"]) { $1 })
    #expect(terminal.contains("\r\u{1B}[2K"))  // redrawn in place
    #expect(terminal.contains("4/4"))
    #expect(terminal.contains("ETA"))
    #expect(terminal.contains("\u{1B}[36m"))

    let plain = try await Self.runOnTerminal(
      "\(base)2' '\(list)'", environment: env.merging(["NO_COLOR": "1", "TERM": "xterm"]) { $1 })
    #expect(plain.contains("4/4"))
    #expect(!plain.contains("\u{1B}[36m"))

    // A terminal that takes no escape sequences (TERM=dumb, or none named): no colour, no line
    // erased and redrawn, the table and summary as on a pipe.
    for term in ["dumb", ""] {
      let dumb = try await Self.runOnTerminal(
        "\(base)\(term.isEmpty ? "5" : "4")' '\(list)'", environment: env.merging(["TERM": term]) { $1 })
      #expect(!dumb.contains("\u{1B}"), "TERM=\(term): \(dumb.debugDescription)")
      #expect(dumb.contains("4 accepted"), "TERM=\(term): \(dumb)")
    }

    let piped = try await CLI.run(["prefetch", "--cache-dir", scratch.path + "/c3", list])
    #expect(!piped.stderr.contains("\u{1B}"))
    #expect(!piped.stdout.contains("\u{1B}"))
    #expect(piped.stdout.contains("4 accepted"))
  }

  @Test(
    "Ctrl-C stops prefetch cleanly: in-flight downloads cancelled, summary printed, exit 130, no temp files")
  func interrupt() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/fast.png", body: try Media.bytes("png-rgba.png"))
    let urls = [server.url("/fast.png")] + (0..<6).map { server.url("/fault/trickle?\($0)") }
    let list = scratch.path + "/urls.txt"
    try writeTestFile(urls.joined(separator: "\n"), to: list)
    let cache = scratch.path + "/c"

    let process = try CLI.spawn(
      ["prefetch", "--json", "--deadline", "20", "--cache-dir", cache, list], stdout: scratch.path + "/out",
      stderr: scratch.path + "/err")
    // Observed, not assumed: the fast file is answered, and the six trickles are mid-body (the
    // server has their requests and the child holds a body file with bytes in it for each). The bound
    // only stops a broken test.
    let pid = process.processIdentifier
    let midBody = ContinuousClock.now + .seconds(15)
    while ContinuousClock.now < midBody, process.isRunning,
      CLI.jsonLines(ofFile: scratch.path + "/out").isEmpty
        || server.requestCount(path: "/fault/trickle") < 6
        || Self.openBodyFiles(of: pid, in: cache).count < 6
        || Self.bodySizes(of: pid, in: cache).filter({ $0 > 0 }).count < 6
    {
      try await Task.sleep(for: .milliseconds(10))
    }
    try #require(process.isRunning, "prefetch ended before the interrupt")
    try #require(server.requestCount(path: "/fault/trickle") == 6)
    try #require(Self.openBodyFiles(of: pid, in: cache).count >= 6, "the trickles never reached their bodies")
    // Interrupted, and waited for, from a thread of its own (the exit is timed there)
    let took = await CLI.interrupt(process)

    #expect(process.terminationStatus == 130)
    #expect(took < 1.0)
    let lines = CLI.jsonLines(ofFile: scratch.path + "/out")
    #expect(lines.first?["outcome"] as? String == "accepted")
    let summary = (try? String(contentsOfFile: scratch.path + "/err", encoding: .utf8)) ?? ""
    #expect(summary.contains("interrupted"))
    // The cancelled trickles had received bytes (seen in their body files): their records say
    // so, and the summary counts them (it said "0 B transferred" of the trickles, issue 53).
    let cancelled = lines.filter { ($0["error"] as? [String: Any])?["code"] as? String == "cancelled" }
    #expect(cancelled.count == 6, "\(lines)")
    #expect(cancelled.allSatisfy { ($0["bytesTransferred"] as? Int ?? 0) >= 1 }, "\(cancelled)")
    let fastBytes = try Media.bytes("png-rgba.png").count
    let total = lines.reduce(0) { $0 + ($1["bytesTransferred"] as? Int ?? 0) }
    #expect(total >= fastBytes + 6)
    #expect(summary.contains("· \(total) B transferred") || total >= 1024, "\(summary)")
    // The cache's temporary directory exists (the run made it) and holds nothing.
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache + "/v3/tmp")
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  /// The size of each body file process `pid` holds open in `cache`'s temporary directory.
  static func bodySizes(of pid: pid_t, in cache: String) -> [Int] {
    openBodyDescriptors(of: pid, in: cache).compactMap { link in
      var info = stat()
      return stat(link, &info) == 0 ? Int(info.st_size) : nil
    }
  }

  /// The descriptors process `pid` holds open on files in `cache`'s temporary directory,
  /// anonymous (`O_TMPFILE`) body files included.
  static func openBodyFiles(of pid: pid_t, in cache: String) -> [String] {
    openBodyDescriptors(of: pid, in: cache).compactMap {
      try? FileManager.default.destinationOfSymbolicLink(atPath: $0)
    }
  }

  /// The `/proc/PID/fd/N` links of process `pid` that point into `cache`'s temporary directory.
  static func openBodyDescriptors(of pid: pid_t, in cache: String) -> [String] {
    let directory = cache + "/v3/tmp/"
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
    return descriptors.map { "/proc/\(pid)/fd/" + $0 }.filter {
      (try? FileManager.default.destinationOfSymbolicLink(atPath: $0))?.hasPrefix(directory) == true
    }
  }
}
