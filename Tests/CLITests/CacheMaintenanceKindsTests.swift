import Foundation
import TestSupport
import TestTraits
import Testing

/// `cache stats`, `verify`, `gc` and `rm` over a cache holding every kind of record the product
/// writes (issue #53 item 1): a plain entry, each profile's derivative, a rescued file, an
/// accepted video with its poster time, and an entry keyed without its presigned parameters.
/// Nothing healthy is removed, every entry is counted, and every one is still a hit after.
@Suite("attachkit cache: every kind of record kept and counted", .threadOfItsOwn)
struct CacheMaintenanceKindsTests {
  @Test(
    "stats, verify and gc count every record kind, remove none, and each is a hit after; rm takes only its URL's"
  )
  func everyKindKept() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let photo = scratch.path + "/photo.jpg"
    let made = await ImageBombs.vips(["gaussnoise", photo, "1600", "1000"])
    try #require(made == 0, "vips gaussnoise failed with \(made)")
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let cacheable: [(String, String)] = [("Cache-Control", "max-age=600")]
    server.serve(
      "/p.jpg", body: Array(try Data(contentsOf: URL(fileURLWithPath: photo))), contentType: "image/jpeg",
      headers: cacheable)
    server.serve(
      "/w.webp", body: try Media.bytes("webp-lossy.webp"), contentType: "image/webp", headers: cacheable)
    server.serve(
      "/v.mp4", body: try Media.bytes("mp4-avc1.mp4"), contentType: "video/mp4", headers: cacheable)
    server.serve(
      "/s3/a.png", body: try Media.bytes("png-rgba.png"), contentType: "image/png", headers: cacheable)
    let cache = ["--cache-dir", scratch.path + "/c"]
    let presigned = server.url("/s3/a.png") + "?X-Amz-Signature=abc&X-Amz-Expires=600"
    // Every kind, each fetched once from the origin
    let fetches: [[String]] = [
      [server.url("/p.jpg")],
      ["--profile", "android", server.url("/p.jpg")],
      ["--profile", "ios-compact", server.url("/p.jpg")],
      ["--rescue", server.url("/w.webp")],
      ["--rescue", server.url("/v.mp4")],
      ["--cache-key-ignore", "preset:s3", presigned],
    ]
    for arguments in fetches {
      let fetched = try await CLI.run(["fetch", "--json"] + cache + arguments)
      #expect(fetched.status == 0, "\(arguments): \(fetched.stdout) \(fetched.stderr)")
    }
    let requests = server.totalRequests

    // When the maintenance commands run over it, as cron would
    for command in ["stats", "verify", "gc"] {
      let run = try await CLI.run(["cache", command, "--json"] + cache)
      let report = try #require(run.jsonLines.first, "cache \(command): \(run.stdout) \(run.stderr)")
      // Then every entry is counted and nothing is corrupt or removed
      #expect(report["entries"] as? Int == fetches.count, "cache \(command): \(report)")
      #expect(report["corrupt"] as? Int == 0, "cache \(command): \(report)")
      #expect(report["removed"] as? Int == 0, "cache \(command): \(report)")
    }
    // and each is a hit afterwards: the origin sees no new request
    for arguments in fetches {
      let again = try await CLI.run(["fetch", "--json"] + cache + arguments)
      #expect(again.jsonLines.first?["source"] as? String == "cache", "\(arguments): \(again.stdout)")
    }
    #expect(server.totalRequests == requests)
    // and rm of the plain URL takes its entries (the original and its profiles' derivatives),
    // nothing else
    let removed = try await CLI.run(["cache", "rm", "--json"] + cache + [server.url("/p.jpg")])
    #expect(removed.status == 0, "\(removed.stdout) \(removed.stderr)")
    let after = try await CLI.run(["cache", "stats", "--json"] + cache)
    #expect(after.jsonLines.first?["entries"] as? Int == fetches.count - 3, "\(after.stdout)")
  }
}
