import Foundation
import Glibc
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// One cache lookup per request of `attachkit serve`: the handler's fast path and the pipeline
/// share it. A lookup reads its record from a memory map (no system call to count), so the
/// server's own counter, `attachkit_cache_lookups_total` on `/metrics`, is read before and after
/// each request.
@Suite("attachkit serve: one cache lookup per request", .serialized, .threadOfItsOwn)
struct ServeLookupCountTests {
  @Test("a miss and an info request each look the URL up once; a hit at most once")
  func oneLookupPerRequest() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/a.gif", body: gif, contentType: "image/gif")
    origin.serve("/i.gif", body: gif, contentType: "image/gif")
    origin.serve("/h.gif", body: try Media.bytes("gif-animated.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let filePath = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile)
    let infoPath = try await serve.signed(origin.url("/i.gif"), keyFile: workspace.keyFile, route: "info")
    let hitPath = try await serve.signed(origin.url("/h.gif"), keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(hitPath)).status == 200)  // cached before the count starts
    let lookups = { () async throws -> Int in
      let text = String(decoding: try await Curl.get(serve.url("/metrics")).body, as: UTF8.self)
      let line = text.split(separator: "\n").first { $0.hasPrefix("attachkit_cache_lookups_total ") }
      return try #require(line.flatMap { Int($0.split(separator: " ")[1]) })
    }

    // When a new URL is asked for, an info request for another, and a cached one (a hit)
    let before = try await lookups()
    #expect(try await Curl.get(serve.url(filePath)).status == 200)
    let afterMiss = try await lookups()
    #expect(try await Curl.get(serve.url(infoPath)).status == 200)
    let afterInfo = try await lookups()
    #expect(try await Curl.get(serve.url(hitPath)).header("X-Attachment-Source") == "cache")
    let afterHit = try await lookups()

    // Then the miss and the info request looked up once each (the handler's lookup is the
    // pipeline's), and the hit at most once (the hit memo may answer it without a lookup)
    #expect(afterMiss - before == 1)
    #expect(afterInfo - afterMiss == 1)
    #expect((0...1).contains(afterHit - afterInfo), "lookups for the hit: \(afterHit - afterInfo)")
    #expect(origin.requestCount(path: "/a.gif") == 1 && origin.requestCount(path: "/h.gif") == 1)
  }
}
