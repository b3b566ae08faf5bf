import Foundation
import TestSupport
import TestTraits
import Testing

/// What a server, a URL or an input file says never reaches a terminal or a JSON reader raw:
/// C0, DEL and C1 controls are escaped and invalid UTF-8 is replaced, on every output.
@Suite("attachkit escapes what it did not write", .serialized, .threadOfItsOwn)
struct EscapingTests {
  /// A Content-Type with ESC, a C1 control (U+0085 as UTF-8), a bidi override and a byte that
  /// is not UTF-8.
  private static let hostileContentType: [UInt8] =
    Array("text/html\u{1B}[31m;x=\u{85}\u{202E}".utf8) + [0xFF, 0x41]

  private static func rawOutputs(_ arguments: [String], _ scratch: Scratch) async throws -> (
    out: Data, err: Data
  ) {
    let out = scratch.path + "/out"
    let err = scratch.path + "/err"
    let process = try CLI.spawn(arguments, stdout: out, stderr: err)
    await process.exitStatus()
    return (
      try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: err))
    )
  }

  private static func expectClean(_ data: Data, _ what: String) {
    #expect(!data.contains(0x1B), "raw ESC in \(what)")
    #expect(String(data: data, encoding: .utf8) != nil, "\(what) is not valid UTF-8")
    let text = String(decoding: data, as: UTF8.self)
    #expect(!text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) }, "raw C1 control in \(what)")
    #expect(!text.unicodeScalars.contains { $0.value == 0x202E }, "raw bidi override in \(what)")
  }

  @Test("JSON: a server's Content-Type with ESC, C1, a bidi override and invalid UTF-8 is escaped and valid")
  func jsonEscapesServerText() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.route("/bad") { _, writer in
      _ = writer.writeRaw(
        Array("HTTP/1.1 404 Not Found\r\nContent-Type: ".utf8) + Self.hostileContentType
          + Array("\r\nContent-Length: 2\r\n\r\nno".utf8))
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let (out, err) = try await Self.rawOutputs(
      ["fetch", "--json", "--cache-dir", scratch.path + "/cache", server.url("/bad")], scratch)
    Self.expectClean(out, "stdout")
    Self.expectClean(err, "stderr")
    let object = try #require(try JSONSerialization.jsonObject(with: out) as? [String: Any])
    let error = try #require(object["error"] as? [String: Any])
    #expect(error["code"] as? String == "http_status")
    // The escapes decode back to what the server sent, with the invalid byte replaced.
    #expect(error["detected"] as? String == "text/html\u{1B}[31m;x=\u{85}\u{202E}\u{FFFD}A")
    #expect(String(decoding: out, as: UTF8.self).contains("\\u001b[31m;x=\\u0085\\u202e"))
  }

  @Test("table and --quiet: a hostile URL and file name print escaped", arguments: [false, true])
  func tableAndQuietEscape(quiet: Bool) async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let list = scratch.path + "/list.txt"
    try Data("http://example.invalid/\u{1B}]0;pwned\u{7}\u{9B}31m.jpg\n".utf8).write(
      to: URL(fileURLWithPath: list))
    let file = scratch.path + "/x\u{1B}[2J\u{202E}.jpg"
    try writeTestFile(Data("not an image".utf8), to: file)
    let flags = quiet ? ["--quiet"] : []
    let prefetch = try await Self.rawOutputs(
      ["prefetch"] + flags + ["--cache-dir", scratch.path + "/c", list], scratch)
    Self.expectClean(prefetch.out, "prefetch stdout")
    Self.expectClean(prefetch.err, "prefetch stderr")
    #expect(String(decoding: prefetch.out + prefetch.err, as: UTF8.self).contains("\\u{1b}]0;pwned"))
    let validate = try await Self.rawOutputs(["validate"] + flags + [file], scratch)
    Self.expectClean(validate.out, "validate stdout")
    Self.expectClean(validate.err, "validate stderr")
    #expect(String(decoding: validate.out + validate.err, as: UTF8.self).contains("x\\u{1b}[2J\\u{202e}.jpg"))
  }
}
