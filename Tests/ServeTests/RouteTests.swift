import Foundation
import TestSupport
import TestTraits
import Testing

/// Every route, status and header of `attachkit serve`, through curl and Python's urllib.
@Suite("attachkit serve routes", .serialized, .threadOfItsOwn)
struct RouteTests {
  @Test("GET /v1/a: 200 with the file, its type, length, ETag, freshness, type hint and source; then a hit")
  func fileAndHeaders() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    origin.serve(
      "/fresh.jpg", body: jpeg, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=3600")])
    origin.serve(
      "/brief.jpg", body: jpeg, contentType: "application/octet-stream",
      headers: [("Cache-Control", "max-age=5")])
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }

    let path = try await serve.signed(origin.url("/fresh.jpg"), keyFile: workspace.keyFile)
    let first = try await Curl.get(serve.url(path))
    #expect(first.status == 200)
    #expect(Array(first.body) == jpeg)
    #expect(first.header("Content-Type") == "image/jpeg")
    #expect(first.header("Content-Length") == String(jpeg.count))
    #expect(first.header("ETag") == "\"\(await SHA256Text.of(jpeg))\"")
    #expect(first.header("X-Attachment-Type-Hint") == "public.jpeg")
    #expect(first.header("X-Attachment-Source") == "network")
    let maxAge = first.header("Cache-Control").flatMap { Int($0.split(separator: "=").last ?? "") }
    #expect(first.header("Cache-Control")?.hasPrefix("public, max-age=") == true)
    #expect((3500...3600).contains(maxAge ?? 0))
    #expect(first.header("Vary") == nil)

    let hit = try await Curl.get(serve.url(path))
    #expect(hit.status == 200)
    #expect(Array(hit.body) == jpeg)
    #expect(hit.header("X-Attachment-Source") == "cache")
    #expect(origin.requestCount(path: "/fresh.jpg") == 1)

    // An origin that gives five seconds: what is left of them, no more.
    let plain = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/brief.jpg"), keyFile: workspace.keyFile)))
    #expect((0...5).contains(CacheControlTests.seconds("max-age", in: plain.header("Cache-Control")) ?? -1))
    #expect(plain.header("Content-Type") == "image/jpeg")

    // HEAD: the same head, no body.
    let head = try await Urllib.get(serve.url(path), method: "HEAD")
    #expect(head.status == 200)
    #expect(head.bytes == 0)
    #expect(head.headers["content-length"] == String(jpeg.count))
    #expect(head.headers["etag"] == first.header("ETag"))
  }

  @Test(
    "If-None-Match answers 304; Range answers 206 (and 416 past the end); If-Range with another tag gets 200")
  func conditionalAndRanges() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let video = try Media.bytes("mp4-avc1.mp4")
    origin.serve("/v.mp4", body: video, contentType: "video/mp4")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/v.mp4"), keyFile: workspace.keyFile))
    let etag = "\"\(await SHA256Text.of(video))\""

    // urllib: 304 for the current tag (alone, weak, or in a list), 200 for another.
    let notModified = try await Urllib.get(url, headers: ["If-None-Match": etag])
    #expect(notModified.status == 304)
    #expect(notModified.bytes == 0)
    #expect(notModified.headers["etag"] == etag)
    #expect(try await Urllib.get(url, headers: ["If-None-Match": "\"other\", W/\(etag)"]).status == 304)
    let changed = try await Urllib.get(url, headers: ["If-None-Match": "\"other\""])
    #expect(changed.status == 200)
    #expect(changed.bytes == video.count)

    // curl: ranges as AVPlayer asks for them.
    let probe = try await Curl.get(url, ["-H", "Range: bytes=0-1"])
    #expect(probe.status == 206)
    #expect(Array(probe.body) == Array(video[0..<2]))
    #expect(probe.header("Content-Range") == "bytes 0-1/\(video.count)")
    let middle = try await Curl.get(url, ["-r", "100-1099"])
    #expect(middle.status == 206)
    #expect(Array(middle.body) == Array(video[100..<1100]))
    #expect(middle.header("Content-Length") == "1000")
    let tail = try await Curl.get(url, ["-H", "Range: bytes=-10"])
    #expect(Array(tail.body) == Array(video.suffix(10)))
    let past = try await Curl.get(url, ["-H", "Range: bytes=\(video.count)-"])
    #expect(past.status == 416)
    #expect(past.header("Content-Range") == "bytes */\(video.count)")
    let stale = try await Curl.get(url, ["-H", "Range: bytes=0-1", "-H", "If-Range: \"old\""])
    #expect(stale.status == 200)
    #expect(stale.body.count == video.count)
    let current = try await Curl.get(url, ["-H", "Range: bytes=0-1", "-H", "If-Range: \(etag)"])
    #expect(current.status == 206)
  }

  @Test("GET /v1/info: the fetch --json record; /healthz; /metrics counts what was served")
  func infoHealthAndMetrics() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let png = try Media.bytes("png-rgba.png")
    origin.serve("/p.png", body: png, contentType: "image/png")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }

    let info = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/p.png"), keyFile: workspace.keyFile, route: "info")))
    #expect(info.status == 200)
    #expect(info.header("Content-Type") == "application/json")
    let record = try #require(info.json)
    #expect(record["outcome"] as? String == "accepted")
    #expect(record["uti"] as? String == "public.png")
    #expect(record["bytes"] as? Int == png.count)
    let sha256 = await SHA256Text.of(png)
    #expect(record["sha256"] as? String == sha256)
    #expect(record["source"] as? String == "network")

    let file = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/p.png"), keyFile: workspace.keyFile)))
    #expect(file.header("X-Attachment-Source") == "cache")
    #expect(origin.requestCount(path: "/p.png") == 1)

    let health = try await Urllib.get(serve.url("/healthz"))
    #expect(health.status == 200)
    #expect(try await Curl.get(serve.url("/healthz")).body == Data("ok\n".utf8))

    let metrics = String(decoding: try await Curl.get(serve.url("/metrics")).body, as: UTF8.self)
    #expect(metrics.contains("attachkit_requests_total{route=\"info\",outcome=\"network\",code=\"200\"} 1"))
    #expect(
      metrics.contains("attachkit_requests_total{route=\"attachment\",outcome=\"cache\",code=\"200\"} 1"))
    #expect(metrics.contains("attachkit_requests_total{route=\"healthz\",outcome=\"ok\",code=\"200\"} 2"))
    #expect(metrics.contains("attachkit_cache_hits_total 1\n"))
    #expect(metrics.contains("attachkit_upstream_requests_total 1\n"))
    #expect(metrics.contains("attachkit_upstream_bytes_total \(png.count)\n"))
    #expect(metrics.contains("attachkit_inflight_requests 1\n"))  // this request
    #expect(metrics.contains("attachkit_request_duration_seconds_count{route=\"healthz\"} 2\n"))
    #expect(metrics.contains("attachkit_request_duration_seconds_bucket{route=\"healthz\",le=\"+Inf\"} 2\n"))

    // The access log: one JSON line per request, with the redacted URL and never the signature.
    await serve.terminate()
    let lines = serve.events.filter { $0["route"] != nil }
    #expect(lines.count == 5)
    #expect(lines.first?["url"] as? String == origin.url("/p.png"))
    #expect(lines.first?["status"] as? Int == 200)
    let signature = try await serve.signed(origin.url("/p.png"), keyFile: workspace.keyFile).split(
      separator: "/")[
        2]
    #expect(!serve.log.contains(String(signature)))
  }
}

/// What a hit remembers must not outlive the file.
@Suite("attachkit serve hits", .serialized, .threadOfItsOwn)
struct HitTests {
  @Test("a hot URL whose cached file is removed (cache clear) is fetched again, not failed")
  func removedWhileHot() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-animated.gif")
    origin.serve("/hot.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=600")])
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let url = serve.url(try await serve.signed(origin.url("/hot.gif"), keyFile: workspace.keyFile))
    #expect(try await Curl.get(url).header("X-Attachment-Source") == "network")
    #expect(try await Curl.get(url).header("X-Attachment-Source") == "cache")

    let cleared = try await Run.process(
      Binaries.attachkit, ["cache", "clear", "--cache-dir", workspace.cache])
    #expect(cleared.status == 0)
    #expect(!workspace.cacheFiles().contains { $0.hasSuffix(".gif") })
    let again = try await Curl.get(url)
    #expect(again.status == 200)
    #expect(Array(again.body) == gif)
    #expect(again.header("X-Attachment-Source") == "network")
    #expect(origin.requestCount(path: "/hot.gif") == 2)
  }
}
