import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

/// serve's own cache is a shared cache (RFC 9111 §3, §4.2.1): it stores no answer the origin
/// marked `private` (it still delivers it to the one who asked, `private` passed on) and takes
/// its own freshness from `s-maxage` when the origin gives one, `max-age` staying the device's.
@Suite("attachkit serve: its cache is a shared cache", .serialized, .threadOfItsOwn)
struct SharedCacheRuleTests {
  @Test(
    "private, max-age=600: each request is fetched from the origin, answered private, and nothing is kept")
  func privateIsNotStored() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve(
      "/p.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "private, max-age=600")], etag: "\"p\"")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/p.gif"), keyFile: workspace.keyFile))
    for round in 1...2 {
      let answer = try await Curl.get(url)
      #expect(answer.status == 200)
      #expect(answer.header("X-Attachment-Source") == "network", "round \(round)")
      let header = answer.header("Cache-Control") ?? ""
      #expect(header.hasPrefix("private, max-age="), "\(header)")
      #expect((590...600).contains(CacheControlTests.seconds("max-age", in: header) ?? -1), "\(header)")
    }
    #expect(origin.requestCount(path: "/p.gif") == 2)
    // Neither a record nor a body stays behind (the answer's own file is released).
    #expect(
      await eventually(within: 30) {
        workspace.cacheFiles().filter { !["v3/lock", "v3/records", "v3/records-lock"].contains($0) }.isEmpty
      },
      "\(workspace.cacheFiles())")
    let cache = try AttachmentCache(configuration: CacheConfiguration(directory: workspace.cache))
    #expect(try cache.stats().entries == 0)
  }

  @Test("max-age=600, s-maxage=2: serve's copy is stale after 2 s (not 600), the device still gets max-age")
  func sharedMaxAgeSetsServesLifetime() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve(
      "/s.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "max-age=600, s-maxage=2")], etag: "\"s\"")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/s.gif"), keyFile: workspace.keyFile))
    let first = try await Curl.get(url)
    #expect(first.header("X-Attachment-Source") == "network")
    let header = first.header("Cache-Control") ?? ""
    #expect((590...600).contains(CacheControlTests.seconds("max-age", in: header) ?? -1), "\(header)")
    #expect((0...2).contains(CacheControlTests.seconds("s-maxage", in: header) ?? -1), "\(header)")
    // Observed: hits until serve's own lifetime (s-maxage) ends, then a revalidation.
    #expect(
      try await eventually(within: 30) {
        try await Curl.get(url).header("X-Attachment-Source") == "revalidated"
      })
    #expect(origin.requestCount(path: "/s.gif") == 2)
  }

  @Test("a private answer a command's fetch stored in the same cache directory is not served from it")
  func privateStoredByAPrivateUserIsNotServed() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve(
      "/q.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "private, max-age=600")])
    // attachkit fetch is a private cache: it keeps the answer.
    let fetch = try await Run.process(
      Binaries.attachkit,
      ["fetch", "--cache-dir", workspace.cache, "--allow-private-networks", "--json", origin.url("/q.gif")])
    #expect(fetch.status == 0, "\(fetch.stderr)")
    let again = try await Run.process(
      Binaries.attachkit,
      ["fetch", "--cache-dir", workspace.cache, "--allow-private-networks", "--json", origin.url("/q.gif")])
    #expect(again.text.contains("\"source\":\"cache\""), "\(again.text)")
    #expect(origin.requestCount(path: "/q.gif") == 1)

    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let answer = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/q.gif"), keyFile: workspace.keyFile)))
    #expect(answer.status == 200)
    #expect(answer.header("X-Attachment-Source") == "network")
    #expect(answer.header("Cache-Control")?.hasPrefix("private, max-age=") == true)
    #expect(origin.requestCount(path: "/q.gif") == 2)
  }
}
