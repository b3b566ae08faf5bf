import Foundation
import TestSupport
import TestTraits
import Testing

/// `--profile` on `fetch`, `prefetch` and `rescue`, run as a user runs them: real processes, a
/// real origin on loopback, libvips in the rescue workers.
@Suite("attachkit: --profile", .threadOfItsOwn)
struct ProfileCLITests {
  @Test("fetch and prefetch --profile android deliver a 1024-pixel JPEG; without it, the original; one cache")
  func fetchAndPrefetch() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let photo = scratch.path + "/photo.jpg"
    let made = await ImageBombs.vips(["gaussnoise", photo, "1600", "1000"])
    try #require(made == 0, "vips gaussnoise failed with \(made)")
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve(
      "/p.jpg", body: Array(try Data(contentsOf: URL(fileURLWithPath: photo))), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    server.serve("/v.mp4", body: try Media.bytes("mp4-avc1.mp4"), contentType: "video/mp4")
    let cache = ["--cache-dir", scratch.path + "/c"]

    let android = try await CLI.run(
      ["fetch", "--json", "--profile", "android"] + cache + [server.url("/p.jpg")])
    let ios = try await CLI.run(["fetch", "--json"] + cache + [server.url("/p.jpg")])
    let list = scratch.path + "/urls"
    try Data((server.url("/p.jpg") + "\n").utf8).write(to: URL(fileURLWithPath: list))
    let prefetched = try await CLI.run(["prefetch", "--json", "--profile", "android"] + cache + [list])

    #expect(android.status == 0, "\(android.stderr)")
    let derivative = try #require(android.jsonLines.first)
    #expect(derivative["width"] as? Int == 1024 && derivative["type"] as? String == "jpeg")
    #expect((derivative["bytes"] as? Int ?? .max) <= 1_000_000)
    #expect(ios.jsonLines.first?["width"] as? Int == 1600)
    #expect(ios.jsonLines.first?["source"] as? String == "network")
    let again = try #require(prefetched.jsonLines.first)
    #expect(
      again["source"] as? String == "cache" && again["sha256"] as? String == derivative["sha256"] as? String)
    #expect(server.requestCount(path: "/p.jpg") == 2)
    // cache rm purges the URL's entry and its derivatives: both are fetched again
    let removed = try await CLI.run(["cache", "rm"] + cache + [server.url("/p.jpg")])
    #expect(removed.status == 0, "\(removed.stderr)")
    let refetched = try await CLI.run(
      ["fetch", "--json", "--profile", "android"] + cache + [server.url("/p.jpg")])
    let refetchedIOS = try await CLI.run(["fetch", "--json"] + cache + [server.url("/p.jpg")])
    #expect(refetched.jsonLines.first?["source"] as? String == "network")
    #expect(refetchedIOS.jsonLines.first?["source"] as? String == "network")

    // A video for android is rejected (exit 1), naming the profile; an unknown profile is a usage error
    let video = try await CLI.run(
      ["fetch", "--json", "--profile", "android"] + cache + [server.url("/v.mp4")])
    #expect(video.status == 1)
    let error = video.jsonLines.first?["error"] as? [String: Any]
    #expect(error?["code"] as? String == "unsupported_type")
    #expect((error?["message"] as? String)?.hasPrefix("The android profile takes JPEG and PNG only") == true)
    let unknown = try await CLI.run(["fetch", "--profile", "windows"] + cache + [server.url("/p.jpg")])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("the profiles are android, ios, ios-compact"), "\(unknown.stderr)")
  }

  @Test("rescue --profile android turns a local WebP into a JPEG within the profile's limits")
  func rescueLocalFile() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let webp = scratch.path + "/photo.webp"
    let made = await ImageBombs.vips(["gaussnoise", webp, "2000", "1500"])
    try #require(made == 0, "vips gaussnoise failed with \(made)")
    let output = scratch.path + "/out.jpg"

    let run = try await CLI.run(["rescue", "--json", "--profile", "android", webp, "-o", output])

    #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
    let record = try #require(run.jsonLines.first)
    #expect(record["type"] as? String == "jpeg")
    #expect(record["width"] as? Int == 1024 && record["height"] as? Int == 768)
    #expect((record["bytes"] as? Int ?? .max) <= 1_000_000)
    #expect(FileManager.default.fileExists(atPath: output))
  }
}
