import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --rescue` proposes a video's poster time (issue #38, item 2); the info route's record
/// carries it as `posterTimeSeconds`.
@Suite("serve --rescue: poster time on the info route", .rescueTurn, .threadOfItsOwn)
struct PosterTimeServeTests {
  @Test("the info record of a video with a black first second carries posterTimeSeconds past it")
  func infoCarriesIt() async throws {
    let scratch = NSTemporaryDirectory() + "poster-time-\(UUID().uuidString.prefix(6))"
    try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    // A real video: 1 s of black, then 3 s of a test pattern.
    let video = scratch + "/black-first.mp4"
    let made = try await Run.process(
      "/usr/bin/ffmpeg",
      [
        "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=black:s=320x240:r=25:d=1", "-f",
        "lavfi", "-i", "testsrc=s=320x240:r=25:d=3", "-filter_complex", "[0:v][1:v]concat=n=2:v=1:a=0[v]",
        "-map", "[v]", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", video,
      ])
    try #require(made.status == 0, "ffmpeg failed: \(made.stderr)")
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serveFile("/black-first.mp4", file: video, contentType: "video/mp4")
    let workspace = try Workspace()
    defer { workspace.remove() }
    // A generous budget: a worker's first start on a loaded machine can take seconds.
    let serve = try await ServeProcess(workspace: workspace, ["--rescue", "--poster-time-seconds", "20"])
    defer { serve.stop() }

    let info = try await serve.signed(
      origin.url("/black-first.mp4"), keyFile: workspace.keyFile, route: "info")
    let record = try await Curl.get(serve.url(info))
    #expect(record.status == 200)
    #expect(record.json?["outcome"] as? String == "accepted")
    let seconds = try #require(
      record.json?["posterTimeSeconds"] as? Double, "\(String(decoding: record.body, as: UTF8.self))")
    #expect(seconds >= 1.0 && seconds < 1.5, "proposed \(seconds) s")
    // The file route's hit and the info route's again: the same figure, from the record.
    let file = try await serve.signed(origin.url("/black-first.mp4"), keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(file)).status == 200)
    #expect(try await Curl.get(serve.url(info)).json?["posterTimeSeconds"] as? Double == seconds)
    #expect(origin.requestCount(path: "/black-first.mp4") == 1)
  }
}
