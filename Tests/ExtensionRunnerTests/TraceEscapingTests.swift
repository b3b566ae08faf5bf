import AttachmentKit
import ExtensionRunnerCore
import Foundation
import TestSupport
import TestTraits
import Testing

/// What came from a payload, a server or a URL never reaches the terminal raw.
@Suite("Trace escaping", .cpuBound)
struct TraceEscapingTests {
  /// Whether `bytes` hold a terminal control: ESC, another C0 control but newline, DEL, a C1
  /// control (U+0080–U+009F), or bytes that are not UTF-8 at all.
  static func terminalHazards(in bytes: Data) -> [String] {
    guard let text = String(validating: bytes, as: UTF8.self) else { return ["invalid UTF-8"] }
    return text.unicodeScalars.compactMap { scalar in
      let value = scalar.value
      let control = (value < 0x20 && scalar != "\n") || (0x7F...0x9F).contains(value)
      return control ? "U+" + String(value, radix: 16) : nil
    }
  }

  @Test("identifiers, categories, Content-Type values and error messages are escaped on stderr")
  func hostileStrings() async throws {
    // Given a payload whose category and attachment identifier hold ESC[31m, BEL and C1 controls,
    let fixture = try RunnerFixture("escape")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      #"""
      {"aps": {"alert": "hi", "category": "\u001b[31mred\u009b2J", "mutable-content": 1},
       "attachments": [{"url": "{BASE}/evil/type", "id": "\u001b]0;owned\u0007\u0085x"},
                       {"url": "{BASE}/evil/bytes", "id": "raw"}]}
      """#)
    // and a server whose Content-Type holds an escape, a C1 control (as UTF-8) and a byte that
    // is not UTF-8 at all
    fixture.server.route("/evil/type") { _, writer in
      writer.respond(
        status: 404, headers: [("Content-Type", "text/html\u{1B}[31m\u{9B}2J")], body: Array("no".utf8))
    }
    fixture.server.route("/evil/bytes") { _, writer in
      writer.writeRaw(
        Array("HTTP/1.1 500 Oops\r\nContent-Type: text/plain".utf8) + [0x1B, 0x5B, 0x32, 0x4A, 0xFF, 0xC2]
          + Array("\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
    }

    // When the binary runs it
    let run = try await fixture.runBinary(fixture.commonArguments + ["--trace", payload])

    // Then the notification is delivered, and standard error holds no terminal control at all,
    #expect(run.status == 0)
    #expect(try run.output().body == "hi")
    #expect(Self.terminalHazards(in: run.standardErrorBytes) == [], "\(run.standardError)")
    // but shows each hostile string escaped (by AttachmentKit's helper, whatever its notation):
    // the category, the identifier, both Content-Types.
    let stderr = run.standardError
    let escape = Redaction.escapeControlCharacters
    let identifier = "attachment " + escape("\u{1B}]0;owned\u{7}\u{85}x")
    #expect(stderr.contains("category \"" + escape("\u{1B}[31mred\u{9B}2J") + "\""), "\(stderr)")
    #expect(stderr.contains(identifier), "\(stderr)")
    #expect(stderr.contains("(the bytes are " + escape("text/html\u{1B}[31m\u{9B}2J") + ")"), "\(stderr)")
    #expect(stderr.contains("(the bytes are " + escape("text/plain\u{1B}[2J")), "\(stderr)")
    #expect(fixture.server.requestCount(path: "/evil/type") == 1)
    #expect(fixture.server.requestCount(path: "/evil/bytes") == 1)
    // Standard output (the content and --trace as JSON) holds no raw control either: C0, DEL
    // and C1 are \u escapes there (the category and userInfo carry the payload's raw text).
    #expect(Self.terminalHazards(in: Data(run.standardOutput.utf8)) == [], "\(run.standardOutput)")
    #expect(try run.output().categoryIdentifier == "\u{1B}[31mred\u{9B}2J")
    // The --trace JSON on stdout carries the same escaped steps.
    let trace = try #require(try run.output().trace)
    #expect(trace.contains { $0.name == identifier })
  }

  @Test("the trace escapes C0, DEL and C1 in names and details, and keeps one line a step")
  func traceRecords() {
    let trace = Trace()
    trace.note("name\u{1B}[2J", .event, detail: "line\nbreak\u{7F}\u{90}\u{9F} ok é")
    let step = trace.begin("begin\u{9B}", detail: "d\u{1B}")
    trace.end(step, .failed, detail: "end\u{0}\u{85}")
    let lines = Trace.render(trace.snapshot).split(separator: "\n", omittingEmptySubsequences: false)
    let escape = Redaction.escapeControlCharacters
    #expect(lines.count == 2)
    #expect(lines[0].contains(escape("name\u{1B}[2J") + " "))
    #expect(lines[0].hasSuffix(escape("line\nbreak\u{7F}\u{90}\u{9F} ok é")))
    #expect(lines[1].contains(escape("begin\u{9B}")))
    #expect(lines[1].hasSuffix(escape("end\u{0}\u{85}")))
    #expect(TraceEscapingTests.terminalHazards(in: Data(lines.joined(separator: "\n").utf8)) == [])
  }
}
