import Foundation
import TestSupport
import TestTraits
import Testing

/// `--rescue` on `fetch` as a process: the rescues run in worker processes, so attachkit itself
/// maps neither libvips nor FFmpeg's libraries (the dynamic loader's own log), and a WebM is
/// delivered as an MP4 that says how it was made.
@Suite("CLI: media rescue", .threadOfItsOwn)
struct MediaRescueCLITests {
  @Test(
    "with --rescue, attachkit maps neither libvips nor FFmpeg: image and media rescues run in workers; a WebM is delivered as MP4"
  )
  func ffmpegOnlyForMedia() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/clip.mp4", body: try Media.bytes("mp4-avc1.mp4"))
    server.serve("/photo.webp", body: try Media.bytes("webp-lossy.webp"))
    server.serve("/clip.webm", body: try Media.bytes("webm-vp9.webm"))
    let fetch = ["fetch", "--json", "--rescue", "--cache-dir", scratch.path + "/c"]
    // The loader's log goes to files (libvips alone logs more than a pipe holds).
    var run = 0
    func loaded(_ arguments: [String]) async throws -> (CLI.Result, String) {
      run += 1
      let log = scratch.path + "/ld-\(run)"
      let result = try await CLI.run(arguments, environment: ["LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": log])
      let files = (try? FileManager.default.contentsOfDirectory(atPath: scratch.path)) ?? []
      let text = files.filter { $0.hasPrefix("ld-\(run).") }.compactMap {
        try? String(contentsOfFile: scratch.path + "/" + $0, encoding: .utf8)
      }
      return (result, text.joined())
    }

    let (plain, plainLog) = try await loaded(fetch + [server.url("/clip.mp4"), server.url("/photo.webp")])
    #expect(plain.status == 0, "\(plain.stdout)")
    #expect(plainLog.contains("libcurl.so"))  // the log works
    #expect(plain.stdout.contains("\"by\":\"image\""), "\(plain.stdout)")  // the WebP was rescued
    #expect(!plainLog.contains("libvips"), "an image rescue decoded in attachkit's own process")
    #expect(!plainLog.contains("libavformat"), "an accepted video or an image rescue loaded FFmpeg")

    let (media, mediaLog) = try await loaded(fetch + [server.url("/clip.webm")])
    #expect(media.status == 0, "\(media.stdout)")
    #expect(mediaLog.contains("libcurl.so"))  // the log works
    #expect(!mediaLog.contains("libavformat"), "a media rescue decoded in attachkit's own process")
    let line = media.stdout.split(separator: "\n").first.map(String.init) ?? ""
    let record = try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(media.stdout)")
    #expect(record["type"] as? String == "mp4")
    let rescued = try #require(record["rescued"] as? [String: Any])
    #expect(rescued["by"] as? String == "media")
    #expect(rescued["from"] as? String == "video/webm")
    #expect(rescued["actions"] as? [String] == ["transcoded"])

    let (hit, hitLog) = try await loaded(fetch + [server.url("/clip.webm")])
    #expect(hit.status == 0)
    #expect(hit.stdout.contains("\"source\":\"cache\""), "\(hit.stdout)")
    #expect(!hitLog.isEmpty && !hitLog.contains("libavformat"), "a hit of a rescued video loaded FFmpeg")
    #expect(server.requestCount(path: "/clip.webm") == 1)

    // Without --rescue the derivative is never served: the original's refusal, from the record.
    let off = try await CLI.run([
      "fetch", "--json", "--cache-dir", scratch.path + "/c", server.url("/clip.webm"),
    ])
    #expect(off.status == 1)
    #expect(off.stdout.contains("unsupported_type"), "\(off.stdout)")
    #expect(server.requestCount(path: "/clip.webm") == 1)
  }

  @Test("attachkit rescue hands files to the libraries by descriptor: brackets in a name are not options")
  func bracketsInNames() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // libvips reads "photo.webp[n=1]" as photo.webp with an option: a decoy of that name is there.
    let animated = scratch.path + "/photo.webp[n=1]"
    let clip = scratch.path + "/clip.webm[x]"
    try writeTestFile(Data(try Media.bytes("webp-animated.webp")), to: animated)
    try writeTestFile(Data(try Media.bytes("webp-lossy.webp")), to: scratch.path + "/photo.webp")
    try writeTestFile(Data(try Media.bytes("webm-vp9.webm")), to: clip)

    let image = try await CLI.run(["rescue", "--json", animated, "--output", scratch.path + "/out[0].gif"])
    #expect(image.status == 0, "\(image.stdout)")
    #expect(image.jsonLines.first?["type"] as? String == "gif")
    #expect(image.jsonLines.first?["frames"] as? Int == 2)  // the animation named, not the decoy
    let video = try await CLI.run(["rescue", "--json", clip, "--output", scratch.path + "/out[1].mp4"])
    #expect(video.status == 0, "\(video.stdout)")
    #expect(video.jsonLines.first?["type"] as? String == "mp4")
  }

  @Test(
    "attachkit rescue and fetch --rescue deliver the same bytes with the same actions, one rescue orchestration",
    arguments: ["webp-lossy.webp", "webm-vp9.webm", "m2ts-h264-ac3.mts", "mp4-h264-dts.mp4"])
  func sameOrchestration(_ file: String) async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    server.serve("/media", body: try Media.bytes(file))
    /// The first JSON line's digest and actions.
    func delivered(_ result: CLI.Result) throws -> (sha256: String?, actions: [String]?) {
      let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
      let record = try #require(
        try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(result.stdout)")
      return (record["sha256"] as? String, (record["rescued"] as? [String: Any])?["actions"] as? [String])
    }
    let local = try await CLI.run([
      "rescue", "--json", Media.directory + "/" + file, "--output", scratch.path + "/out",
    ])
    let fetched = try await CLI.run([
      "fetch", "--json", "--rescue", "--cache-dir", scratch.path + "/c", server.url("/media"),
    ])
    let (a, b) = (try delivered(local), try delivered(fetched))
    #expect(a.sha256 != nil && a.sha256 == b.sha256, "\(file): \(local.stdout) / \(fetched.stdout)")
    #expect(a.actions != nil && a.actions == b.actions, "\(file)")
  }

  @Test(
    "fetch --rescue shrinks a 20 s, 60 MB 1080p H.264 + AAC video to fit the 50 MB video limit (issue #42's case)",
    .cpuBound)
  func shrinksSixtyMegabytes() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let source = scratch.path + "/big.mp4"
    let made = await CleanSpawn.run([
      "/usr/bin/ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
      "testsrc2=size=1920x1080:rate=30,noise=alls=12:allf=t", "-f", "lavfi", "-i",
      "sine=frequency=440:sample_rate=48000", "-t", "20", "-c:v", "libx264", "-preset", "ultrafast", "-b:v",
      "24M", "-maxrate", "24M", "-bufsize", "24M", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k",
      "-movflags", "+faststart", source,
    ])
    try #require(made == 0, "ffmpeg could not make the source")
    let bytes = try #require(try FileManager.default.attributesOfItem(atPath: source)[.size] as? Int)
    try #require(bytes > 55_000_000, "the source is \(bytes) bytes, not about 60 MB")
    server.serveFile("/big.mp4", file: source, contentType: "video/mp4")

    // A deadline long enough for a loaded machine: the shrink takes about 13 s on two idle cores.
    let result = try await CLI.run([
      "fetch", "--json", "--rescue", "--deadline", "120", "--cache-dir", scratch.path + "/c",
      server.url("/big.mp4"),
    ])
    #expect(result.status == 0, "\(result.stdout)")
    let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
    let record = try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(result.stdout)")
    #expect(record["type"] as? String == "mp4")
    let delivered = try #require(record["bytes"] as? Int)
    #expect(delivered <= 50_000_000 && delivered > 30_000_000, "\(delivered) bytes")
    #expect(record["width"] as? Int == 1280 && record["height"] as? Int == 720)
    #expect(abs((record["durationSeconds"] as? Double ?? 0) - 20) < 0.1)
    let rescued = try #require(record["rescued"] as? [String: Any], "\(result.stdout)")
    #expect(rescued["actions"] as? [String] == ["shrunk"])
    #expect(rescued["originalBytes"] as? Int == bytes)
  }
}
