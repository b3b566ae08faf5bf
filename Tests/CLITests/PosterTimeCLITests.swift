import Foundation
import TestSupport
import TestTraits
import Testing

/// `fetch --rescue` proposes a video's poster time (issue #38, item 2) and its JSON carries it as
/// `posterTimeSeconds`; a hit carries it from the record; without `--rescue` none is proposed.
@Suite("CLI: poster time", .rescueTurn, .threadOfItsOwn)
struct PosterTimeCLITests {
  @Test("fetch --json carries posterTimeSeconds past a black first second, on the miss and on the hit")
  func fetchCarriesIt() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    // A real video: 1 s of black, then 3 s of a test pattern.
    let video = scratch.path + "/black-first.mp4"
    let made = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=1", "-f",
        "lavfi", "-i", "testsrc=s=320x240:r=25:d=3", "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]",
        "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", video,
      ])
    try #require(made.status == 0, "\(made.stderr)")
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serveFile("/black-first.mp4", file: video, contentType: "video/mp4")
    let url = server.url("/black-first.mp4")

    // A generous budget: a worker's first start on a loaded machine can take seconds.
    let fetch = [
      "fetch", "--json", "--rescue", "--poster-time-seconds", "20", "--cache-dir", scratch.path + "/c", url,
    ]
    let miss = try await CLI.run(fetch)
    #expect(miss.status == 0, "\(miss.stdout)\(miss.stderr)")
    let record = try #require(miss.jsonLines.first, "\(miss.stdout)")
    #expect(record["source"] as? String == "network")
    let seconds = try #require(record["posterTimeSeconds"] as? Double, "\(miss.stdout)")
    #expect(seconds >= 1.0 && seconds < 1.5, "proposed \(seconds) s")

    let hit = try await CLI.run(fetch)
    let again = try #require(hit.jsonLines.first, "\(hit.stdout)")
    #expect(again["source"] as? String == "cache")
    #expect(again["posterTimeSeconds"] as? Double == seconds)
    #expect(server.requestCount(path: "/black-first.mp4") == 1)

    // Without --rescue, or with a budget of 0, no worker: no proposal.
    let plain = try await CLI.run(["fetch", "--json", "--cache-dir", scratch.path + "/plain", url])
    #expect(plain.status == 0)
    #expect(plain.jsonLines.first?["posterTimeSeconds"] == nil, "\(plain.stdout)")
    let off = try await CLI.run([
      "fetch", "--json", "--rescue", "--poster-time-seconds", "0", "--cache-dir", scratch.path + "/off", url,
    ])
    #expect(off.status == 0)
    #expect(off.jsonLines.first?["posterTimeSeconds"] == nil, "\(off.stdout)")
    // The budget is a part of --rescue.
    let alone = try await CLI.run([
      "fetch", "--json", "--poster-time-seconds", "2", "--cache-dir", scratch.path + "/alone", url,
    ])
    #expect(alone.status == 2)
    #expect(alone.stderr.contains("--poster-time-seconds bounds a part of --rescue"), "\(alone.stderr)")
  }
}
