import Foundation
import TestSupport
import TestTraits
import Testing

/// The command line's options about origins and keys (issue #37), run as a user runs them.
@Suite("attachkit: origins and keys", .threadOfItsOwn)
struct OriginOptionsTests {
  @Test(
    "--cache-key-ignore preset:s3: two presigned URLs of one file share one entry, the second confirmed with the origin; cache rm with another signature keeps it; a bad preset is a usage error"
  )
  func presignedURLs() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve(
      "/o.jpg", body: try Media.bytes("jpeg-exif.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")], etag: "\"o1\"")
    let scratch = try Scratch()
    defer { scratch.remove() }
    // Dated far ahead: a presigned URL past its own expiry is refused without a request.
    let urls = ["1", "2"].map {
      server.url("/o.jpg") + "?X-Amz-Date=2099120\($0)T000000Z&X-Amz-Expires=60&X-Amz-Signature=\($0)\($0)"
    }
    var sources: [String] = []
    for url in urls {
      let result = try await CLI.run(
        ["fetch", "--json", "--cache-dir", scratch.path + "/c", "--cache-key-ignore", "preset:s3", url])
      #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
      sources.append(result.jsonLines.first?["source"] as? String ?? "")
    }
    // One entry: the second URL is asked of the origin conditionally (its own signature may not
    // open the object), and a 304 keeps the entry.
    #expect(sources == ["network", "revalidated"])
    #expect(server.requests(path: "/o.jpg").last?.header("If-None-Match") == "\"o1\"")
    // The URL the entry was confirmed with last is a plain hit; the environment variable reads
    // the same rules.
    let viaEnvironment = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", urls[1]],
      environment: ["ATTACHKIT_CACHE_KEY_IGNORE": "preset:s3"])
    #expect(viaEnvironment.jsonLines.first?["source"] as? String == "cache")
    #expect(server.requestCount(path: "/o.jpg") == 2)
    // cache rm with a signature the entry was not fetched with keeps it; --force removes it.
    let forged = server.url("/o.jpg") + "?X-Amz-Signature=forged"
    let kept = try await CLI.run(
      [
        "cache", "rm", "--json", "--cache-dir", scratch.path + "/c", "--cache-key-ignore", "preset:s3",
        forged,
      ])
    #expect(kept.jsonLines.first?["outcome"] as? String == "unconfirmed", "\(kept.stdout)")
    let forced = try await CLI.run(
      [
        "cache", "rm", "--json", "--force", "--cache-dir", scratch.path + "/c", "--cache-key-ignore",
        "preset:s3", forged,
      ])
    #expect(forced.jsonLines.first?["outcome"] as? String == "removed", "\(forced.stdout)")

    let bad = try await CLI.run(
      ["fetch", "--cache-dir", scratch.path + "/c", "--cache-key-ignore", "preset:s4", urls[0]])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("preset:s3"), "\(bad.stderr)")
  }

  @Test("cache rm while another process hits the same cache: the entry goes, every hit of the other succeeds")
  func removeWhileHitting() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    for path in ["/gone.jpg", "/kept.gif"] {
      server.serve(
        path, body: try Media.bytes(path.hasSuffix("jpg") ? "jpeg-exif.jpg" : "gif-static.gif"),
        headers: [("Cache-Control", "max-age=600")])
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let cache = scratch.path + "/c"
    let (gone, kept) = (server.url("/gone.jpg"), server.url("/kept.gif"))
    let first = try await CLI.run(["fetch", "--json", "--cache-dir", cache, gone, kept])
    #expect(first.status == 0, "\(first.stderr)")

    // Another process hits both URLs in a loop (paced, so it does not load a parallel run), a
    // JSON line per answer, until told to stop
    let log = scratch.path + "/hits.jsonl"
    let stop = scratch.path + "/stop"
    let script = """
      while [ ! -e "$4" ]; do
        "$1" fetch --json --cache-dir "$2" "$5" "$6" >> "$3" || echo FAILED >> "$3"; sleep 0.05
      done
      """
    let hitter = Task {
      try await CLI.run(
        program: "/bin/sh", ["-c", script, "sh", CLI.attachkit, cache, log, stop, gone, kept])
    }
    // When it has answered from the cache (observed in its log), the entry is removed
    #expect(
      await eventually(within: 30) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").count > 0 })
    let removed = try await CLI.run([
      "cache", "rm", "--json", "--cache-dir", cache, gone, server.url("/never"),
    ])
    #expect(removed.status == 0, "\(removed.stderr)")
    #expect(removed.jsonLines.map { $0["outcome"] as? String } == ["removed", "not_cached"])
    // and the other process keeps answering until it fetched the removed URL again
    #expect(await eventually(within: 30) { server.requestCount(path: "/gone.jpg") >= 2 })
    _ = FileManager.default.createFile(atPath: stop, contents: nil)
    _ = try await hitter.value
    let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
    #expect(!lines.isEmpty && !lines.contains("FAILED"))
    for line in lines {
      let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
      #expect(object?["outcome"] as? String == "accepted", "\(line)")
    }
    #expect(server.requestCount(path: "/kept.gif") == 1)
    let verify = try await CLI.run(["cache", "verify", "--json", "--cache-dir", cache])
    #expect(verify.jsonLines.first?["corrupt"] as? Int == 0)
  }

  @Test(
    "--allow-origin: a URL outside the list is origin_not_allowed (exit 4); a malformed entry is a usage error"
  )
  func allowOrigin() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a.jpg", body: try Media.bytes("jpeg-exif.jpg"))
    let scratch = try Scratch()
    defer { scratch.remove() }
    let inside = try await CLI.run(
      [
        "fetch", "--json", "--cache-dir", scratch.path + "/c", "--allow-origin", "127.0.0.1",
        server.url("/a.jpg"),
      ])
    #expect(inside.status == 0, "\(inside.stderr)")
    let outside = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", server.url("/a.jpg")],
      environment: ["ATTACHKIT_ALLOW_ORIGIN": "https://media.example.com/push/,*.cdn.example.com"])
    #expect(outside.status == 4)
    #expect((outside.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "origin_not_allowed")
    let bad = try await CLI.run(["fetch", "--allow-origin", "ftp://x/", server.url("/a.jpg")])
    #expect(bad.status == 2)
    #expect(server.requestCount(path: "/a.jpg") == 1)
  }

  @Test(
    "--origin-headers: the private origin answers, the output never shows the value; a file others may read is refused"
  )
  func originHeaders() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    server.route("/p/a.jpg") { request, writer in
      let allowed = request.header("X-Api-Key") == "k-secret-9"
      _ = writer.respond(
        status: allowed ? 200 : 403, headers: [("Content-Type", "image/jpeg")], body: allowed ? jpeg : [])
    }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = scratch.path + "/origin-headers"
    try writeTestFile("# test\n\(server.url("/p/")) X-Api-Key: k-secret-9\n", to: file)
    #expect(chmod(file, 0o600) == 0)
    let fetched = try await CLI.run(
      [
        "fetch", "--json", "--cache-dir", scratch.path + "/c", "--origin-headers", file,
        server.url("/p/a.jpg"),
      ])
    #expect(fetched.status == 0, "\(fetched.stdout) \(fetched.stderr)")
    #expect(!(fetched.stdout + fetched.stderr).contains("k-secret-9"))
    let viaEnvironment = try await CLI.run(
      ["fetch", "--json", "--no-cache", "--cache-dir", scratch.path + "/c", server.url("/p/a.jpg")],
      environment: ["ATTACHKIT_ORIGIN_HEADERS": file])
    #expect(viaEnvironment.status == 0, "\(viaEnvironment.stderr)")
    #expect(chmod(file, 0o644) == 0)
    let open = try await CLI.run(["fetch", "--origin-headers", file, server.url("/p/a.jpg")])
    #expect(open.status == 2)
    #expect(open.stderr.contains("chmod 600") && !open.stderr.contains("k-secret-9"))
  }
}
