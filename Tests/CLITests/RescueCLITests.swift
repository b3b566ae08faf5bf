import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit rescue` and `--rescue` on fetch, through the built binary.
@Suite("CLI: rescue", .threadOfItsOwn)
struct RescueCLITests {
  @Test("rescue FILE --output OUT: a WebP with alpha becomes a PNG, with a rescued object")
  func rescueFile() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let output = scratch.path + "/out.png"

    let result = try await CLI.run([
      "rescue", "--json", Media.directory + "/webp-alpha.webp", "--output", output,
    ])

    #expect(result.status == 0)
    let line = try #require(result.jsonLines.first)
    #expect(line["outcome"] as? String == "accepted")
    #expect(line["type"] as? String == "png")
    #expect(line["path"] as? String == output)
    let rescued = try #require(line["rescued"] as? [String: Any])
    #expect(rescued["from"] as? String == "image/webp")
    #expect(rescued["actions"] as? [String] == ["converted"])
    #expect(rescued["originalWidth"] as? Int == 64)
    // and what it wrote validates as the PNG it describes
    let check = try await CLI.run(["validate", "--json", output])
    #expect(check.status == 0)
    #expect(check.jsonLines.first?["sha256"] as? String == line["sha256"] as? String)
  }

  @Test("rescue refuses an SVG as validate does, exits 1 and writes nothing")
  func rescueRefuses() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let output = scratch.path + "/out"

    let result = try await CLI.run(["rescue", "--json", Media.directory + "/svg-image.svg", "-o", output])

    #expect(result.status == 1)
    let error = try #require(result.jsonLines.first?["error"] as? [String: Any])
    #expect(error["code"] as? String == "unsupported_type")
    #expect(error["detected"] as? String == "image/svg+xml")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("rescue copies an acceptable file unchanged, with no rescued object")
  func rescueAcceptable() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let output = scratch.path + "/copy.jpg"

    let result = try await CLI.run(["rescue", "--json", Media.directory + "/jpeg-baseline.jpg", "-o", output])

    #expect(result.status == 0)
    #expect(result.jsonLines.first?["rescued"] == nil)
    #expect(try Media.bytes("jpeg-baseline.jpg") == Array(try Data(contentsOf: URL(fileURLWithPath: output))))
  }

  @Test(
    "fetch --rescue converts a WebP in a rescue worker: attachkit itself maps no libvips, with --rescue or without"
  )
  func fetchRescue() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/w", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp")
    let url = server.url("/w")

    // (the loader's log goes to files: libvips' is too long for a pipe read after stdout)
    let plain = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/a", url],
      environment: ["LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": scratch.path + "/plain"])
    let rescued = try await CLI.run(
      ["fetch", "--json", "--rescue", "--cache-dir", scratch.path + "/b", url],
      environment: ["LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": scratch.path + "/rescued"])
    let plainLog = try Self.log(scratch.path, prefix: "plain")
    let rescuedLog = try Self.log(scratch.path, prefix: "rescued")

    #expect(plain.status == 1)
    #expect((plain.jsonLines.first?["error"] as? [String: Any])?["detected"] as? String == "image/webp")
    #expect(plainLog.contains("libcurl.so"))  // the log works
    #expect(!plainLog.contains("libvips"))
    #expect(rescued.status == 0)
    #expect(rescued.jsonLines.first?["type"] as? String == "jpeg")
    #expect((rescued.jsonLines.first?["rescued"] as? [String: Any])?["from"] as? String == "image/webp")
    // libvips runs in the worker, a process of its own (whose environment carries no LD_DEBUG)
    #expect(rescuedLog.contains("libcurl.so"))  // the log works
    #expect(!rescuedLog.contains("libvips"), "the rescue decoded in attachkit's own process")
  }

  /// The dynamic loader's log files `PREFIX.PID` in `directory`, joined.
  static func log(_ directory: String, prefix: String) throws -> String {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(prefix + ".") }
      .map { try String(contentsOfFile: directory + "/" + $0, encoding: .utf8) }.joined()
  }
}
