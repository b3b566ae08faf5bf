import Foundation
import TestSupport
import TestTraits
import Testing

/// The built `attachkit` binary end to end: JSON lines, tables and exit codes.
@Suite("attachkit command line", .serialized, .threadOfItsOwn)
struct CLITests {
  @Test("fetch: accepted, rejected and failed inputs give their JSON lines and exit codes")
  func fetchOutcomes() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/ok", body: try Media.bytes("jpeg-exif.jpg"), contentType: "application/octet-stream")
    server.serve("/web.jpg", body: try Media.bytes("webp-lossy.webp"), contentType: "image/jpeg")
    let cache = ["--cache-dir", scratch.path + "/cache"]

    // accepted
    let ok = try await CLI.run(["fetch", "--json"] + cache + [server.url("/ok")])
    #expect(ok.status == 0)
    let line = try #require(ok.jsonLines.first)
    #expect(line["outcome"] as? String == "accepted")
    #expect(line["source"] as? String == "network")
    #expect(line["type"] as? String == "jpeg")
    #expect(line["uti"] as? String == "public.jpeg")
    #expect(line["extension"] as? String == "jpg")
    #expect((line["path"] as? String)?.hasSuffix(".jpg") == true)
    #expect((line["sha256"] as? String)?.count == 64)
    #expect(line["bytes"] as? Int == 825)
    #expect(line["width"] as? Int == 64)
    #expect((line["timings"] as? [String: Any])?["totalMs"] != nil)
    #expect(line["error"] == nil)

    // the same again: a cache hit
    let hit = try await CLI.run(["fetch", "--json"] + cache + [server.url("/ok")])
    #expect(hit.jsonLines.first?["source"] as? String == "cache")

    // rejected: the bytes are WebP
    let rejected = try await CLI.run(["fetch", "--json"] + cache + [server.url("/web.jpg")])
    #expect(rejected.status == 1)
    let refusal = try #require(rejected.jsonLines.first)
    #expect(refusal["outcome"] as? String == "rejected")
    let error = try #require(refusal["error"] as? [String: Any])
    #expect(error["code"] as? String == "unsupported_type")
    #expect(error["detected"] as? String == "image/webp")

    // failed: 404
    let failed = try await CLI.run(["fetch", "--json"] + cache + [server.url("/status/404")])
    #expect(failed.status == 4)  // failed, not rejected: exit 4
    #expect(failed.jsonLines.first?["outcome"] as? String == "failed")
    #expect((failed.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "http_status")
  }

  @Test("prefetch: results in input order, duplicates share one download, table and summary")
  func prefetchOrderAndTable() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let names = ["png-rgba.png", "gif-animated.gif", "mp3-no-tag.mp3", "wav-pcm16.wav", "mov-qt.mov"]
    for name in names { server.serve("/m/\(name)", body: try Media.bytes(name)) }
    server.route("/m/slow.jpg") { _, writer in  // finishes last, but is listed first
      usleep(300_000)
      _ = writer.respond(status: 200, body: (try? Media.bytes("jpeg-baseline.jpg")) ?? [])
    }
    let list =
      ([server.url("/m/slow.jpg")] + names.map { server.url("/m/\($0)") } + [server.url("/m/png-rgba.png")])
      .joined(separator: "\n") + "\n# a comment\n\n"

    let result = try await CLI.run(
      ["prefetch", "--json", "--cache-dir", scratch.path + "/c", "-"], stdin: list)

    #expect(result.status == 0)
    let inputs = result.jsonLines.compactMap { $0["input"] as? String }
    #expect(
      inputs.map { String($0.split(separator: "/").last ?? "") } == ["slow.jpg"] + names + ["png-rgba.png"])
    #expect(server.requestCount(path: "/m/png-rgba.png") == 1)
    #expect(result.stderr.contains("7 accepted, 0 rejected, 0 failed"))

    let table = try await CLI.run(["prefetch", "--cache-dir", scratch.path + "/c", "-"], stdin: list)
    #expect(table.stdout.contains("OUTCOME"))
    #expect(table.stdout.contains("7 cache hits"))
    #expect(table.stdout.contains("p50"))
  }

  @Test("usage errors exit 2 with a one-line message and a hint; an unusable cache exits 3")
  func usageAndCacheErrors() async throws {
    let bad = try await CLI.run(["prefetch", "--concurrency", "zero"])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("--concurrency"))
    #expect(bad.stderr.contains("--help"))
    let unknown = try await CLI.run(["fetch", "--jsn", "http://x/"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("did you mean '--json'"))
    let unreadable = try await CLI.run(["prefetch", "/nonexistent/list.txt"])
    #expect(unreadable.status == 2)

    let scratch = try Scratch()
    defer { scratch.remove() }
    let file = scratch.path + "/not-a-directory"
    #expect(FileManager.default.createFile(atPath: file, contents: Data()))
    let unusable = try await CLI.run(["fetch", "--cache-dir", file, "http://127.0.0.1:1/a.jpg"])
    #expect(unusable.status == 3)
    let shared = scratch.path + "/shared"
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    chmod(shared, 0o777)
    let worldWritable = try await CLI.run(["cache", "stats", "--cache-dir", shared])
    #expect(worldWritable.status == 3)
    #expect(worldWritable.stderr.contains("writable by everyone"))
  }

  @Test("loopback is refused with blocked_address unless private networks are allowed")
  func privateNetworkGuard() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.png", body: try Media.bytes("png-gray.png"))
    let cache = ["--cache-dir", scratch.path + "/c"]
    let blocked = try await CLI.run(
      ["fetch", "--json"] + cache + [server.url("/a.png")],
      environment: ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"])
    #expect(blocked.status == 4)
    #expect((blocked.jsonLines.first?["error"] as? [String: Any])?["code"] as? String == "blocked_address")
    #expect(blocked.jsonLines.first?["outcome"] as? String == "failed")
    let allowed = try await CLI.run(
      ["fetch", "--json", "--allow-private-networks"] + cache + [server.url("/a.png")],
      environment: ["ATTACHKIT_ALLOW_PRIVATE_NETWORKS": "0"])
    #expect(allowed.status == 0)
  }

  @Test("credentials in URLs are never printed; control characters are escaped")
  func redaction() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.gif", body: try Media.bytes("gif-static.gif"))
    let url = "http://user:s3cret@127.0.0.1:\(server.port)/a.gif"
    let cache = ["--cache-dir", scratch.path + "/c"]
    for arguments in [["fetch", "--json"], ["fetch"]] {
      let result = try await CLI.run(arguments + cache + [url])
      #expect(result.status == 0)
      #expect(!result.stdout.contains("s3cret") && !result.stderr.contains("s3cret"))
      #expect(result.stdout.contains("http://***@127.0.0.1"))
    }
    let hostile = try await CLI.run(["validate", "/nonexistent/\u{1B}[31mred"])
    #expect(!hostile.stdout.contains("\u{1B}") && !hostile.stderr.contains("\u{1B}"))
  }

  @Test(
    "an accepted miss loads no libmagic; a cache hit loads no libcurl, libmagic, libcrypto, libssl, Foundation, ICU or zlib (the dynamic loader's own log)"
  )
  func leanHitPath() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/lean.png", body: try Media.bytes("png-rgba.png"))
    server.serve("/wide.mp4", body: try Media.bytes("mp4-avc1.mp4"))  // over 4 KiB: judged while streaming
    server.serve("/page.png", body: try Media.bytes("html-error-page.html"))
    let arguments = ["fetch", "--cache-dir", scratch.path + "/c", server.url("/lean.png")]

    let miss = try await CLI.run(arguments + [server.url("/wide.mp4")], environment: ["LD_DEBUG": "libs"])
    #expect(miss.status == 0)
    #expect(miss.stderr.contains("libcurl.so"))  // the log works: a miss opens libcurl
    #expect(miss.stderr.contains("libcrypto.so"))  // content is hashed on a miss
    #expect(!miss.stderr.contains("libmagic.so"), "an accepted miss loaded libmagic")
    #expect(!miss.stderr.contains("libvips"), "a plain miss without rescue loaded libvips")
    // A refusal is named by libmagic: the page is refused as text/html.
    let refused = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", server.url("/page.png")],
      environment: ["LD_DEBUG": "libs"])
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("libmagic.so"))
    #expect(refused.stdout.contains("text/html"))

    let hit = try await CLI.run(arguments, environment: ["LD_DEBUG": "libs"])
    #expect(hit.status == 0)
    // the table's row says the answer came from the cache (the summary always mentions "cache")
    #expect(hit.stdout.split(separator: "\n").contains { $0.hasPrefix("accepted") && $0.contains(" cache ") })
    for library in [
      "libcurl.so", "libmagic.so", "libcrypto.so", "libssl.so", "libFoundation", "libicu", "libmicrohttpd",
      "libvips", "libz.so",
    ] {
      #expect(!hit.stderr.contains(library), "a hit loaded \(library)")
    }
  }

  @Test("help and version")
  func helpAndVersion() async throws {
    let help = try await CLI.run(["--help"])
    #expect(help.status == 0)
    for word in ["fetch", "prefetch", "validate", "cache", "EXIT CODES"] {
      #expect(help.stdout.contains(word))
    }
    let command = try await CLI.run(["help", "prefetch"])
    #expect(command.stdout.contains("--concurrency"))
    let version = try await CLI.run(["--version"])
    #expect(version.stdout.hasPrefix("attachkit "))
  }

  @Test("validate: one JSON line per file; exit 1 when any is refused")
  func validate() async throws {
    let files = ["jpeg-baseline.jpg", "html-error-page.html", "truncated-png-no-iend.png"].map {
      Media.directory + "/" + $0
    }
    let result = try await CLI.run(["validate", "--json"] + files)
    #expect(result.status == 1)
    let lines = result.jsonLines
    #expect(lines.count == 3)
    #expect(lines[0]["outcome"] as? String == "accepted")
    #expect(lines[0]["source"] as? String == "file")
    #expect((lines[1]["error"] as? [String: Any])?["detected"] as? String == "text/html")
    #expect((lines[2]["error"] as? [String: Any])?["code"] as? String == "truncated")
    let good = try await CLI.run(["validate", files[0]])
    #expect(good.status == 0)
  }

  @Test("cache verify --json reports entries, corrupt and removed")
  func cacheVerify() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/a.gif", body: try Media.bytes("gif-static.gif"))
    let cache = ["--cache-dir", scratch.path + "/c"]
    _ = try await CLI.run(["fetch"] + cache + [server.url("/a.gif")])
    let verify = try await CLI.run(["cache", "verify", "--json"] + cache)
    #expect(verify.status == 0)
    let report = try #require(verify.jsonLines.first)
    #expect(report["entries"] as? Int == 1)
    #expect(report["corrupt"] as? Int == 0)
    #expect(report["removed"] as? Int == 0)
    let cleared = try await CLI.run(["cache", "clear", "--json"] + cache)
    #expect((cleared.jsonLines.first?["removed"] as? Int ?? 0) >= 2)
    let stats = try await CLI.run(["cache", "stats", "--json"] + cache)
    #expect(stats.jsonLines.first?["entries"] as? Int == 0)
  }
}
