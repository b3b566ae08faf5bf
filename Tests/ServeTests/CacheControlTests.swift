import Foundation
import TestSupport
import TestTraits
import Testing

/// `Cache-Control` on file answers follows the origin's as a shared cache passes it on
/// (RFC 9111): what the origin forbade a shared cache is never made `public`.
@Suite("attachkit serve Cache-Control", .serialized, .threadOfItsOwn)
struct CacheControlTests {
  /// The `max-age` (or another directive's number) in a `Cache-Control` value.
  static func seconds(_ directive: String, in header: String?) -> Int? {
    for part in (header ?? "").split(separator: ",") {
      let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=")
      if pair.count == 2, pair[0] == directive { return Int(pair[1]) }
    }
    return nil
  }

  @Test(
    "no-store, no-cache, max-age=0, private (with and without a lifetime), s-maxage and Last-Modified follow the origin"
  )
  func directivesFollowTheOrigin() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    let old = "Tue, 01 Jan 1980 00:00:00 GMT"
    let cases: [(path: String, cacheControl: String?, lastModified: String?)] = [
      ("/no-store.gif", "no-store", nil), ("/no-cache.gif", "no-cache", nil), ("/zero.gif", "max-age=0", nil),
      ("/private.gif", "private", old), ("/private-600.gif", "private, max-age=600", nil),
      ("/shared.gif", "s-maxage=7200, max-age=60", nil), ("/dated.gif", nil, old),
    ]
    for item in cases {
      origin.serve(
        item.path, body: gif, contentType: "image/gif",
        headers: item.cacheControl.map { [("Cache-Control", $0)] } ?? [], lastModified: item.lastModified)
    }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    var answers: [String: String] = [:]
    for item in cases {
      let url = serve.url(try await serve.signed(origin.url(item.path), keyFile: workspace.keyFile))
      for round in 0..<2 {  // the network answer, then the cached one
        let answer = try await Curl.get(url)
        #expect(answer.status == 200)
        let header = answer.header("Cache-Control") ?? ""
        let forbidsSharing = ["no-store", "no-cache", "private", "max-age=0"].contains {
          item.cacheControl?.contains($0) == true
        }
        if forbidsSharing { #expect(!header.contains("public"), "\(item.path): \(header)") }
        if round == 1 { answers[item.path] = header }
        #expect(answer.header("Last-Modified") == item.lastModified, "\(item.path)")
      }
    }
    #expect(answers["/no-store.gif"] == "no-store")
    #expect(answers["/no-cache.gif"] == "no-cache")
    #expect(answers["/zero.gif"] == "max-age=0, must-revalidate")
    // A heuristic lifetime from an old Last-Modified, but private: the tier must not keep it.
    #expect(answers["/private.gif"]?.hasPrefix("private, max-age=") == true)
    #expect(answers["/private-600.gif"]?.hasPrefix("private, max-age=") == true)
    #expect((590...600).contains(Self.seconds("max-age", in: answers["/private-600.gif"]) ?? -1))
    let shared = answers["/shared.gif"]
    #expect(shared?.hasPrefix("public, max-age=") == true)
    #expect((50...60).contains(Self.seconds("max-age", in: shared) ?? -1))
    #expect((7190...7200).contains(Self.seconds("s-maxage", in: shared) ?? -1))
    #expect(answers["/dated.gif"]?.hasPrefix("public, max-age=") == true)
    for item in cases where item.cacheControl != "no-store" {
      #expect(origin.requestCount(path: item.path) <= 2, "\(item.path)")
    }
  }

  @Test(
    "a 304 without Cache-Control keeps the origin's lifetime: the revalidated answer's max-age is not the default"
  )
  func revalidationKeepsTheLifetime() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    let modified = "Wed, 01 Jan 2025 00:00:00 GMT"
    // A 304 that repeats only the validator, as many origins send it.
    origin.route("/brief.gif") { request, writer in
      let conditional = request.headers.contains {
        $0.name.lowercased() == "if-none-match" && $0.value == "\"b\""
      }
      if conditional {
        writer.respond(status: 304, headers: [("ETag", "\"b\"")])
      } else {
        writer.respond(
          status: 200,
          headers: [
            ("Content-Type", "image/gif"), ("ETag", "\"b\""), ("Cache-Control", "max-age=2"),
            ("Last-Modified", modified),
          ], body: gif)
      }
    }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/brief.gif"), keyFile: workspace.keyFile))
    let first = try await Curl.get(url)
    #expect(first.header("X-Attachment-Source") == "network")
    #expect((0...2).contains(Self.seconds("max-age", in: first.header("Cache-Control")) ?? -1))
    // Hits until the two seconds pass; then the copy is revalidated.
    var revalidated: CurlAnswer?
    _ = try await eventually(within: 30) {
      let answer = try await Curl.get(url)
      if answer.header("X-Attachment-Source") == "revalidated" { revalidated = answer }
      return revalidated != nil
    }
    let answer = try #require(revalidated)
    #expect(answer.status == 200)
    #expect((0...2).contains(Self.seconds("max-age", in: answer.header("Cache-Control")) ?? -1))
    #expect(answer.header("Last-Modified") == modified)
    #expect(origin.requestCount(path: "/brief.gif") == 2)
  }
}
