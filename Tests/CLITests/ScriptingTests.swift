import Foundation
import TestSupport
import TestTraits
import Testing

/// The command line as scripts drive it: URLs on standard input, delivered files copied where
/// the script wants them, and a reader that goes away before the output ends.
@Suite("attachkit in scripts", .serialized, .threadOfItsOwn)
struct ScriptingTests {
  @Test(
    "fetch -: URLs from standard input, in place of the '-', one per line (trimmed) as prefetch reads them")
  func fetchFromStandardInput() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    for name in ["png-gray.png", "gif-static.gif", "jpeg-exif.jpg"] {
      server.serve("/\(name)", body: try Media.bytes(name))
    }
    let stdin =
      "# campaign\n\n  \(server.url("/gif-static.gif"))\t\r\n\(server.url("/jpeg-exif.jpg"))\n"

    let result = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", server.url("/png-gray.png"), "-"], stdin: stdin)

    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let inputs = result.jsonLines.compactMap { ($0["input"] as? String)?.split(separator: "/").last }
    #expect(inputs == ["png-gray.png", "gif-static.gif", "jpeg-exif.jpg"])
    #expect(result.jsonLines.allSatisfy { $0["outcome"] as? String == "accepted" })
    let empty = try await CLI.run(["fetch", "--json", "--cache-dir", scratch.path + "/c", "-"], stdin: "")
    #expect(empty.status == 0 && empty.stdout.isEmpty)
  }

  @Test("fetch -o FILE: the delivered file copied to FILE, on a miss and on a hit; the JSON path is the copy")
  func fetchOutputFile() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bytes = try Media.bytes("jpeg-exif.jpg")
    server.serve("/push/123", body: bytes)
    let cache = ["--cache-dir", scratch.path + "/c"]
    for (run, source) in [(1, "network"), (2, "cache")] {
      let file = scratch.path + "/out\(run).jpg"
      let result = try await CLI.run(["fetch", "--json", "-o", file] + cache + [server.url("/push/123")])
      #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
      #expect(result.jsonLines.first?["source"] as? String == source)
      #expect(result.jsonLines.first?["path"] as? String == file)
      #expect(Array(try Data(contentsOf: URL(fileURLWithPath: file))) == bytes)
    }
    // The copy is the caller's: changing it leaves the cached file intact.
    try writeTestFile(Data("scribbled".utf8), to: scratch.path + "/out2.jpg")
    let again = try await CLI.run(["fetch", "--json"] + cache + [server.url("/push/123")])
    let cached = try #require(again.jsonLines.first?["path"] as? String)
    #expect(Array(try Data(contentsOf: URL(fileURLWithPath: cached))) == bytes)
    #expect(server.requestCount(path: "/push/123") == 1)
  }

  @Test(
    "fetch -o DIR: each file named from its URL with the canonical extension; a name given twice is numbered")
  func fetchOutputDirectory() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/push/123", body: try Media.bytes("jpeg-exif.jpg"))
    server.serve("/a/banner.jpeg", body: try Media.bytes("png-gray.png"))  // the bytes are PNG
    server.serve("/b/banner.png", body: try Media.bytes("png-rgba.png"))
    server.serve("/page.jpg", body: try Media.bytes("html-error-page.html"))
    let out = scratch.path + "/out"
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
    let urls = ["/push/123?v=2", "/a/banner.jpeg", "/b/banner.png", "/page.jpg"].map { server.url($0) }

    let result = try await CLI.run(
      ["fetch", "--json", "--output", out, "--cache-dir", scratch.path + "/c"] + urls)

    #expect(result.status == 1)  // the HTML page is refused, and not copied
    let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
    #expect(names == ["123.jpg", "banner-2.png", "banner.png"])
    #expect(
      Array(try Data(contentsOf: URL(fileURLWithPath: out + "/banner.png")))
        == (try Media.bytes("png-gray.png")))
    let paths = result.jsonLines.map { $0["path"] as? String }
    #expect(paths == [out + "/123.jpg", out + "/banner.png", out + "/banner-2.png", nil])
  }

  @Test("fetch -o: several URLs need a directory (usage error); a copy that cannot be written is an io_error")
  func fetchOutputErrors() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.gif", body: try Media.bytes("gif-static.gif"))
    let cache = ["--cache-dir", scratch.path + "/c"]
    let several = try await CLI.run(
      ["fetch", "-o", scratch.path + "/one.gif"] + cache + [server.url("/a.gif"), server.url("/a.gif")])
    #expect(several.status == 2)
    #expect(several.stderr.contains("is not a directory"), "\(several.stderr)")
    let unwritable = try await CLI.run(
      ["fetch", "--json", "-o", scratch.path + "/missing/dir/a.gif"] + cache + [server.url("/a.gif")])
    #expect(unwritable.status == 4)
    let line = try #require(unwritable.jsonLines.first)
    #expect(line["outcome"] as? String == "failed")
    #expect((line["error"] as? [String: Any])?["code"] as? String == "io_error")
    #expect(
      (line["error"] as? [String: Any])?["message"] as? String
        == "Cannot write \(scratch.path)/missing/dir/a.gif: No such file or directory.")
  }

  @Test(
    "validate and prefetch on a closed pipe: no SIGPIPE death, nothing on standard error, the inputs' status")
  func closedPipe() async throws {
    let samples = try FileManager.default.contentsOfDirectory(atPath: Media.directory).sorted().map {
      Media.directory + "/" + $0
    }
    // Output well past a pipe's 64 KiB, so a write must meet the closed pipe.
    let files = Array(repeating: samples, count: 20).flatMap { $0 }
    let validate = try await onOwnThread { try Self.runIntoClosedPipe(["validate"] + files) }
    #expect(validate.reason == .exit, "killed by signal \(validate.status)")
    #expect(validate.status == 1)  // Samples/media holds refused files too
    #expect(validate.stderr.isEmpty, "\(validate.stderr)")
    let list = Array(repeating: "nope://x/", count: 3000).joined(separator: "\n")
    let scratch = try Scratch()
    defer { scratch.remove() }
    try writeTestFile(Data(list.utf8), to: scratch.path + "/list")
    let prefetch = try await onOwnThread {
      try Self.runIntoClosedPipe(["prefetch", "--cache-dir", scratch.path + "/c", scratch.path + "/list"])
    }
    #expect(prefetch.reason == .exit, "killed by signal \(prefetch.status)")
    #expect(prefetch.status == 4)  // every nope:// URL failed (unsupported_scheme)
    #expect(prefetch.stderr.isEmpty, "\(prefetch.stderr)")
  }

  /// Runs `attachkit` with its standard output a pipe nobody reads (the read end closed before
  /// it starts); how it ended and what it wrote to standard error.
  private static func runIntoClosedPipe(_ arguments: [String]) throws
    -> (reason: Process.TerminationReason, status: Int32, stderr: String)
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CLI.attachkit)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
    let out = Pipe.closingOnExec()
    let err = Pipe.closingOnExec()
    try out.fileHandleForReading.close()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.runClosingChildEnds()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.blockUntilExit()
    process.closeStandardPipes()
    return (process.terminationReason, process.terminationStatus, String(decoding: errData, as: UTF8.self))
  }
}
