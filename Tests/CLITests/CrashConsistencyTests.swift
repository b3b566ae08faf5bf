import Foundation
import TestSupport
import Testing

/// The cache survives `kill -9` at any moment and concurrent processes: nothing corrupt, no
/// temporary file left after the next open, every URL answered with the true bytes.
@Suite("Crash consistency and concurrent processes", .serialized)
struct CrashConsistencyTests {
  /// A server with `count` distinct WAV files (real structure, distinct last sample), some of
  /// them served slowly so kills land mid-download.
  static func serveWAVs(_ server: TestHTTPServer, count: Int, slowEvery: Int = 0) throws -> [String: [UInt8]]
  {
    let wav = try Media.bytes("wav-pcm16.wav")
    var bodies: [String: [UInt8]] = [:]
    for index in 0..<count {
      var body = wav
      body[body.count - 1] = UInt8(index % 256)
      body[body.count - 2] = UInt8(index / 256)
      let path = "/w/\(index).wav"
      bodies[server.url(path)] = body
      if slowEvery > 0, index % slowEvery == 0 {
        let copy = body
        server.route(path) { _, writer in
          writer.writeHead(status: 200, headers: [("Content-Length", "\(copy.count)")])
          for start in stride(from: 0, to: copy.count, by: 4096) {
            guard writer.write(Array(copy[start..<min(copy.count, start + 4096)])) else { return }
            _ = writer.sleep(milliseconds: 15)
          }
        }
      } else {
        server.serve(path, body: body, contentType: "audio/wav")
      }
    }
    return bodies
  }

  static func checkAnswers(_ lines: [[String: Any]], bodies: [String: [UInt8]]) {
    #expect(lines.count == bodies.count)
    for line in lines {
      let input = line["input"] as? String ?? ""
      #expect(line["outcome"] as? String == "accepted", "\(input): \(line["error"] ?? "")")
      guard let path = line["path"] as? String, let expected = bodies[input] else {
        Issue.record("no path or unknown input \(input)")
        continue
      }
      #expect(FileManager.default.contents(atPath: path) == Data(expected), "\(input)")
    }
  }

  @Test("kill -9 at 50 random moments: verify finds nothing corrupt, no temp files, true bytes after")
  func killNine() throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bodies = try Self.serveWAVs(server, count: 120, slowEvery: 1)
    let list = scratch.path + "/urls.txt"
    try bodies.keys.sorted().joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
    let cache = scratch.path + "/cache"
    var generator = SystemRandomNumberGenerator()

    var killed = 0
    for round in 0..<50 {
      // Clear now and then, so most runs are killed while fetching and publishing.
      if round % 4 == 0 { _ = try CLI.run(["cache", "clear", "--cache-dir", cache]) }
      let process = try CLI.spawn(
        ["prefetch", "--json", "--concurrency", "16", "--cache-dir", cache, list],
        stdout: scratch.path + "/out")
      usleep(UInt32.random(in: 5_000...250_000, using: &generator))
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        killed += 1
      }
      process.waitUntilExit()
    }
    print("kill -9: \(killed) of 50 prefetch runs killed mid-flight")
    #expect(killed >= 40)

    let verify = try CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
    let report = try #require(verify.jsonLines.first)
    #expect(report["corrupt"] as? Int == 0)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache + "/v2/tmp")
    #expect(leftovers.isEmpty, "\(leftovers)")

    let final = try CLI.run(["prefetch", "--json", "--cache-dir", cache, list])
    #expect(final.status == 0)
    Self.checkAnswers(final.jsonLines, bodies: bodies)
  }

  @Test("4 processes × concurrency 16 over the same 200 URLs and one cache: every result correct")
  func concurrentProcesses() throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bodies = try Self.serveWAVs(server, count: 200)
    let list = scratch.path + "/urls.txt"
    try bodies.keys.sorted().joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
    let cache = scratch.path + "/cache"

    let processes = try (0..<4).map { index in
      try CLI.spawn(
        ["prefetch", "--json", "--concurrency", "16", "--cache-dir", cache, list],
        stdout: scratch.path + "/out\(index)")
    }
    for process in processes { process.waitUntilExit() }

    for (index, process) in processes.enumerated() {
      #expect(process.terminationStatus == 0)
      Self.checkAnswers(CLI.jsonLines(ofFile: scratch.path + "/out\(index)"), bodies: bodies)
    }
    let verify = try CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
    let report = try #require(verify.jsonLines.first)
    #expect(report["entries"] as? Int == 200)
    #expect(report["corrupt"] as? Int == 0)
    // Identical content is stored once even when four processes raced to publish it
    #expect(report["contentFiles"] as? Int == 200)
  }
}
