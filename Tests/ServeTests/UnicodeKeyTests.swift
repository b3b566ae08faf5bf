import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

/// URLs that are equal as Swift `String`s (canonically equivalent) but differ in bytes are
/// different URLs to the cache, the origin and a CDN, and so to the server's own per-URL state.
@Suite("attachkit serve: per-URL state keyed by bytes", .serialized, .threadOfItsOwn)
struct UnicodeKeyTests {
  /// `…/café.jpg` with a combining acute accent (NFD) and with `é` (NFC): `==` as `String`s.
  static let nfd = "/cafe\u{301}.jpg"
  static let nfc = "/caf\u{E9}.jpg"

  /// Whether a request target holds the NFD spelling: U+0301 is CC 81 in UTF-8, which libcurl
  /// sends percent-encoded.
  static func isNFD(_ request: RecordedRequest) -> Bool {
    let bytes = Array(request.target.utf8)
    return bytes.indices.dropLast().contains { bytes[$0] == 0xCC && bytes[$0 + 1] == 0x81 }
      || request.target.uppercased().contains("%CC%81")
  }

  @Test("the NFC café URL is not answered from the NFD one's remembered hit")
  func hitMemo() async throws {
    #expect(Self.nfd == Self.nfc && Array(Self.nfd.utf8) != Array(Self.nfc.utf8))
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    origin.routePrefix("/caf") { request, writer in
      let nfd = Self.isNFD(request)
      writer.respond(
        status: 200,
        headers: [("Content-Type", nfd ? "image/gif" : "image/jpeg"), ("Cache-Control", "max-age=3600")],
        body: nfd ? gif : jpeg)
    }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let attacker = serve.url(try await serve.signed(origin.url(Self.nfd), keyFile: workspace.keyFile))
    let victim = serve.url(try await serve.signed(origin.url(Self.nfc), keyFile: workspace.keyFile))
    #expect(attacker != victim)

    #expect(try await Curl.get(attacker).body.elementsEqual(gif))
    let hit = try await Curl.get(attacker)  // a hit: remembered for a second
    #expect(hit.header("X-Attachment-Source") == "cache")
    let answer = try await Curl.get(victim)
    #expect(answer.status == 200)
    #expect(answer.header("Content-Type") == "image/jpeg")
    #expect(answer.body.elementsEqual(jpeg))
    #expect(answer.header("X-Attachment-Source") == "network")
  }

  @Test("under --max-fetches 1, the NFC URL does not join the NFD one's fetch: 503, not a second fetch")
  func admission() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    let gate = Gate()
    let upstream = Locked(0)
    origin.routePrefix("/caf") { request, writer in
      upstream.withLock { $0 += 1 }
      if Self.isNFD(request) {
        guard gate.wait(writer) else { return }
        writer.respond(status: 200, headers: [("Content-Type", "image/gif")], body: gif)
      } else {
        writer.respond(status: 200, headers: [("Content-Type", "image/jpeg")], body: jpeg)
      }
    }
    let serve = try await ServeProcess(workspace: workspace, ["--max-fetches", "1"])
    defer { serve.stop() }
    let held = try await serve.signed(origin.url(Self.nfd), keyFile: workspace.keyFile)
    let other = serve.url(try await serve.signed(origin.url(Self.nfc), keyFile: workspace.keyFile))
    let waiting = try #require(RawConnection(port: serve.port))
    waiting.send("GET \(held) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    #expect(await eventually { upstream.withLock { $0 } == 1 })

    let refused = try await Curl.get(other)
    #expect(refused.status == 503)
    #expect(refused.errorCode == "overloaded")
    #expect(upstream.withLock { $0 } == 1)
    gate.release()
    #expect(await waiting.readUntilClosed(idleSeconds: 5).text.hasPrefix("HTTP/1.1 200"))
    #expect(try await Curl.get(other).body.elementsEqual(jpeg))
  }
}
