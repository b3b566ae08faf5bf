import Foundation
import TestSupport
import TestTraits
import Testing

/// One signed URL has one spelling: every other spelling a CDN would key separately (and, behind
/// `hash $request_uri`, fetch separately) is refused before any work, never answered `200`.
@Suite("attachkit serve: one spelling per signed URL", .serialized, .threadOfItsOwn)
struct SpellingTests {
  /// The status line and body of `target` sent byte for byte (curl would tidy some spellings).
  private func raw(_ target: String, port: Int) async throws -> (status: Int, text: String) {
    let connection = try #require(RawConnection(port: port))
    connection.send("GET \(target) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    let text = await connection.readUntilClosed(idleSeconds: 5).text
    let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
    return (status, text)
  }

  @Test("upper-case hex, a query, an empty query, %-escapes in either segment and a %00 tail are 4xx")
  func oneSpelling() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/a.gif", body: gif, contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile)
    let parts = path.split(separator: "/").map(String.init)  // v1, a, sig, enc
    try #require(parts.count == 4 && parts[2].count == 64)
    let (signature, encoded) = (parts[2], parts[3])
    // The canonical spelling is served (and cached, so a wrong spelling would be a cheap hit).
    let canonical = try await raw(path, port: serve.port)
    #expect(canonical.status == 200)
    #expect(canonical.text.hasSuffix(String(decoding: gif, as: UTF8.self)))

    // %XX of the first character of a segment: the same bytes once decoded.
    func escaped(_ text: String) -> String {
      String(format: "%%%02X", text.utf8.first ?? 0) + text.dropFirst()
    }
    // The first hex letter (a-f) in upper case: the same MAC bytes, a second spelling.
    func oneLetterUpper(_ hex: String) -> String {
      guard let letter = hex.firstIndex(where: { $0.isLetter }) else { return hex }
      return hex[..<letter] + hex[letter...hex.index(after: letter)].dropLast().uppercased()
        + hex[hex.index(after: letter)...]
    }
    let variants: [(String, Int)] = [
      ("/v1/a/\(signature.uppercased())/\(encoded)", 403),
      ("/v1/a/\(oneLetterUpper(signature))/\(encoded)", 403),
      ("\(path)?utm=1", 400),
      ("\(path)?", 400),
      ("/v1/a/\(signature)/\(escaped(encoded))", 400),
      ("/v1/a/\(escaped(signature))/\(encoded)", 400),
      ("\(path)%00", 400),
      ("\(path)%00.jpg", 400),
      ("/v1/a/\(signature)%2F\(encoded)", 400),
      ("/v1%2Fa/\(signature)/\(encoded)", 404),
    ]
    for (target, status) in variants {
      let answer = try await raw(target, port: serve.port)
      #expect(answer.status == status, "\(target): \(answer.text.prefix(60))")
      #expect(!answer.text.contains("GIF8"), "\(target) was answered with the file")
      #expect(answer.text.contains("no-store"), "\(target)")
    }
    #expect(origin.requestCount(path: "/a.gif") == 1)
    #expect(try await raw(path, port: serve.port).status == 200)
  }
}
