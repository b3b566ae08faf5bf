import Foundation
import TestSupport
import TestTraits
import Testing

/// Issue 40: the command line keeps curl's conventions: `-o -` writes the body to standard
/// output, `-` reads a file from standard input, an I/O error says the system's reason, and
/// the exit status tells a failed input (4) from a rejected one (1).
@Suite("attachkit: curl's conventions", .threadOfItsOwn)
struct CurlConventionsTests {
  /// The names in `directory` (none when it is missing).
  private static func names(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
  }

  @Test("fetch -o -: the body on standard output, byte for byte, the report on standard error; one URL only")
  func outputToStandardOutput() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let bytes = try Media.bytes("jpeg-exif.jpg")
    server.serve("/push/123", body: bytes)
    let cache = ["--cache-dir", scratch.path + "/c"]

    for source in ["network", "cache"] {
      let result = try await CLI.run(["fetch", "-o", "-"] + cache + [server.url("/push/123")])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdoutBytes == bytes)
      #expect(result.stderr.contains("accepted") && result.stderr.contains(source), "\(result.stderr)")
    }
    // --json: the JSON line goes to standard error too (its path is the cached file)
    let json = try await CLI.run(["fetch", "--json", "-o", "-"] + cache + [server.url("/push/123")])
    #expect(json.stdoutBytes == bytes)
    let line = try #require(json.stderr.split(separator: "\n").first)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["outcome"] as? String == "accepted")
    #expect((object["path"] as? String)?.hasPrefix(scratch.path + "/c/") == true)
    // a refused body writes nothing to standard output
    server.serve("/page.jpg", body: try Media.bytes("html-error-page.html"))
    let refused = try await CLI.run(["fetch", "-o", "-"] + cache + [server.url("/page.jpg")])
    #expect(refused.status == 1)
    #expect(refused.stdoutBytes.isEmpty)
    #expect(refused.stderr.contains("unsupported_type"))
    let two = try await CLI.run(
      ["fetch", "-o", "-"] + cache + [server.url("/push/123"), server.url("/push/123")])
    #expect(two.status == 2)
    #expect(two.stderr.contains("takes one URL"), "\(two.stderr)")
    #expect(two.stdoutBytes.isEmpty)
  }

  @Test("validate -: a file from a pipe, judged by its bytes; the spooled copy is removed")
  func validateStandardInput() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let spool = ["TMPDIR": scratch.path]

    let accepted = try await CLI.run(
      ["validate", "--json", "-"], stdinBytes: try Media.bytes("png-gray.png"), environment: spool)
    #expect(accepted.status == 0, "\(accepted.stdout)\(accepted.stderr)")
    let line = try #require(accepted.jsonLines.first)
    #expect(line["input"] as? String == "-")
    #expect(line["type"] as? String == "png")
    #expect(line["path"] == nil)  // the spooled copy is gone
    #expect(Self.names(in: scratch.path).isEmpty)

    let rejected = try await CLI.run(
      ["validate", "--json", Media.directory + "/jpeg-baseline.jpg", "-"],
      stdinBytes: try Media.bytes("html-error-page.html"), environment: spool)
    #expect(rejected.status == 1)
    #expect(rejected.jsonLines.map { $0["outcome"] as? String } == ["accepted", "rejected"])
    #expect((rejected.jsonLines.last?["error"] as? [String: Any])?["detected"] as? String == "text/html")
    #expect(Self.names(in: scratch.path).isEmpty)

    let twice = try await CLI.run(["validate", "-", "-"], stdinBytes: [])
    #expect(twice.status == 2)
    // a spool directory that cannot take the file: an io_error naming the reason
    let nowhere = try await CLI.run(
      ["validate", "--json", "-"], stdinBytes: try Media.bytes("png-gray.png"),
      environment: ["TMPDIR": scratch.path + "/missing"])
    #expect(nowhere.status == 4)
    let message = (nowhere.jsonLines.first?["error"] as? [String: Any])?["message"] as? String
    #expect(message?.hasSuffix(": No such file or directory.") == true, "\(nowhere.stdout)")
  }

  @Test("rescue -: a WebP from a pipe becomes a JPEG at --output; the spooled copy is removed")
  func rescueStandardInput() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let spool = scratch.path + "/tmp"
    try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
    let output = scratch.path + "/banner.jpg"

    let result = try await CLI.run(
      ["rescue", "--json", "-", "-o", output], stdinBytes: try Media.bytes("webp-lossy.webp"),
      environment: ["TMPDIR": spool])

    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    let line = try #require(result.jsonLines.first)
    #expect(line["input"] as? String == "-")
    #expect(line["type"] as? String == "jpeg")
    #expect(line["path"] as? String == output)
    #expect((line["rescued"] as? [String: Any])?["from"] as? String == "image/webp")
    let check = try await CLI.run(["validate", "--json", output])
    #expect(check.jsonLines.first?["sha256"] as? String == line["sha256"] as? String)
    #expect(Self.names(in: spool).isEmpty)
  }

  @Test(
    "rescue -o DIR: the file named after its input with the canonical extension, as fetch -o DIR names it")
  func rescueIntoDirectory() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let out = scratch.path + "/out"
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)

    let webp = try await CLI.run(["rescue", "--json", Media.directory + "/webp-lossy.webp", "-o", out])
    #expect(webp.status == 0, "\(webp.stdout)\(webp.stderr)")
    #expect(webp.jsonLines.first?["path"] as? String == out + "/webp-lossy.jpg")
    // an acceptable file is copied under its canonical extension
    let png = try await CLI.run(["rescue", "--json", Media.directory + "/png-gray.png", "-o", out + "/"])
    #expect(png.jsonLines.first?["path"] as? String == out + "/png-gray.png")
    let piped = try await CLI.run(
      ["rescue", "--json", "-", "-o", out], stdinBytes: try Media.bytes("webp-alpha.webp"))
    #expect(piped.jsonLines.first?["path"] as? String == out + "/attachment.png")
    // a refusal leaves nothing behind, not even the file in flight
    let svg = try await CLI.run(["rescue", "--json", Media.directory + "/svg-image.svg", "-o", out])
    #expect(svg.status == 1)
    #expect(Self.names(in: out) == ["attachment.png", "png-gray.png", "webp-lossy.jpg"])
    let check = try await CLI.run(["validate", "--json"] + Self.names(in: out).map { out + "/" + $0 })
    #expect(check.status == 0, "\(check.stdout)")
  }

  @Test("exit status: 0 accepted, 1 rejected, 4 failed; a failure wins over a rejection")
  func exitStatuses() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.jpg", body: try Media.bytes("jpeg-exif.jpg"))
    server.serve("/page.jpg", body: try Media.bytes("html-error-page.html"))
    let accepted = server.url("/a.jpg")
    let rejected = server.url("/page.jpg")
    let unreachable = "http://127.0.0.1:\(try Loopback.freePort())/a.jpg"  // nothing listens there
    let cache = ["--cache-dir", scratch.path + "/c", "--retries", "0"]

    for (urls, status) in [
      ([accepted], 0), ([rejected], 1), ([unreachable], 4), ([accepted, rejected], 1),
      ([rejected, unreachable], 4), ([unreachable, rejected, accepted], 4),
    ] {
      let fetch = try await CLI.run(["fetch", "--json"] + cache + urls)
      #expect(fetch.status == Int32(status), "fetch \(urls): \(fetch.stdout)")
      let prefetch = try await CLI.run(
        ["prefetch", "--json"] + cache + ["-"], stdin: urls.joined(separator: "\n") + "\n")
      #expect(prefetch.status == Int32(status), "prefetch \(urls): \(prefetch.stdout)")
    }
    let failed = try await CLI.run(["fetch", "--json"] + cache + [unreachable])
    #expect(failed.jsonLines.first?["outcome"] as? String == "failed")
    #expect((failed.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "connect_failed")
    // help and the manual say so, for every command that judges inputs
    for command in ["fetch", "prefetch", "validate", "rescue"] {
      let help = try await CLI.run(["help", command])
      #expect(help.stdout.contains("4    at least one input failed"), "\(command)")
    }
    let man = try await CLI.run(["man"])
    #expect(man.stdout.contains("4    at least one input failed"))
  }

  @Test("io_error says the system's reason: a directory, a missing file, an unwritable --output")
  func ioErrorReasons() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let directory = try await CLI.run(["validate", "--json", scratch.path])
    #expect(directory.status == 4)
    let error = try #require(directory.jsonLines.first?["error"] as? [String: Any])
    #expect(error["code"] as? String == "io_error")
    #expect(error["message"] as? String == "Cannot read \(scratch.path): Is a directory.")
    let missing = try await CLI.run(["validate", "--quiet", scratch.path + "/nope.jpg"])
    #expect(missing.status == 4)
    #expect(
      missing.stderr.contains("io_error: Cannot read \(scratch.path)/nope.jpg: No such file or directory."))
    let unwritable = try await CLI.run(
      ["rescue", "--json", Media.directory + "/png-gray.png", "-o", scratch.path + "/no/dir/a.png"])
    #expect(unwritable.status == 4)
    #expect(
      (unwritable.jsonLines.first?["error"] as? [String: Any])?["message"] as? String
        == "Cannot write \(scratch.path)/no/dir/a.png: No such file or directory.")
  }
}
