import Foundation
import TestSupport
import TestTraits
import Testing

/// What nginx, configured as docs/deploy.md says, keeps of serve's answers: what the origin let
/// a shared cache keep, refusals for a short time, and never a per-request fact on its hits.
@Suite(
  "attachkit serve behind nginx: what the tier keeps", .serialized, .threadOfItsOwn,
  .requires(
    NginxTier.executable != nil, "TierCachingTests", "nginx is not installed (scripts/test.sh installs it)"))
struct TierCachingTests {
  @Test(
    "private and no-cache are not kept by the tier; a 422 is, briefly; a HIT shows no per-request source; an expired entry is REVALIDATED"
  )
  func whatTheTierKeeps() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve(
      "/private.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "private")],
      lastModified: "Tue, 01 Jan 1980 00:00:00 GMT")
    origin.serve(
      "/no-cache.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "no-cache")])
    origin.serve(
      "/public.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=600")])
    origin.serve(
      "/brief.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=3")],
      etag: "\"v\"")
    origin.serve("/page.jpg", body: try Media.bytes("html-error-page.html"), contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let nginx = try await NginxTier(directory: workspace.path + "/nginx", backends: [serve.port])
    defer { nginx.stop() }
    func tier(_ path: String) async throws -> CurlAnswer {
      try await Curl.get(nginx.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile)))
    }

    for path in ["/private.gif", "/no-cache.gif"] {
      #expect(try await tier(path).status == 200)
      let again = try await tier(path)
      #expect(again.status == 200)
      #expect(Array(again.body) == gif)
      #expect(again.header("X-Cache") != "HIT", "\(path): \(again.header("Cache-Control") ?? "")")
    }

    // The tier's hit is its own: it does not repeat the source serve told it on the miss.
    let miss = try await tier("/public.gif")
    #expect(miss.header("X-Cache") == "MISS")
    let hit = try await tier("/public.gif")
    #expect(hit.header("X-Cache") == "HIT")
    #expect(hit.header("X-Attachment-Source") == nil)
    #expect(Array(hit.body) == gif)

    // A refusal is kept for the seconds the proxy remembers it: the second ask is the tier's.
    #expect(try await tier("/page.jpg").status == 422)
    let refused = try await tier("/page.jpg")
    #expect(refused.status == 422)
    #expect(refused.header("X-Cache") == "HIT")
    #expect(origin.requestCount(path: "/page.jpg") == 1)

    // proxy_cache_revalidate: an expired entry is asked for with its ETag, and serve's 304
    // keeps the tier's copy.
    #expect(try await tier("/brief.gif").header("X-Cache") == "MISS")
    var after: CurlAnswer?
    _ = try await eventually(within: 30) {
      let answer = try await tier("/brief.gif")
      if answer.header("X-Cache") != "HIT" { after = answer }
      return after != nil
    }
    let revalidated = try #require(after)
    #expect(revalidated.header("X-Cache") == "REVALIDATED")
    #expect(revalidated.status == 200)
    #expect(Array(revalidated.body) == gif)
  }
}
