import Foundation
import TestSupport
import TestTraits
import Testing

/// `--store` on the command line against a real SeaweedFS: a store that cannot be used is a
/// usage error at start (exit 2, the setting named); `prefetch --store` warms the fleet, and a
/// `fetch` with an empty cache then answers from the store without the origin.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn): a parallel run that started
// several at once starved the machine for seconds, and unrelated 30 s deadlines passed.
@Suite("attachkit --store (SeaweedFS)", .objectStore("StoreCLITests"), .rescueTurn, .threadOfItsOwn)
struct StoreCLITests {
  static let bucket = "attachkit-fleet"

  static func environment(_ store: SeaweedStore, secret: String? = nil) -> [String: String] {
    [
      "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": secret ?? store.secretKey,
      "AWS_ENDPOINT_URL_S3": store.endpoint, "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
      "AWS_SESSION_TOKEN": "",
    ]
  }

  @Test("wrong credentials and a missing bucket: exit 2 at start naming the setting (fetch, prefetch, serve)")
  func unusableStoreIsUsageError() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    let keys = scratch.path + "/keys"
    try writeTestFile(Data((String(repeating: "ab", count: 32) + "\n").utf8), to: keys, mode: 0o600)
    let url = "http://127.0.0.1:9/a.jpg"
    let wrong = Self.environment(store, secret: "wrong-secret")
    let fetch = try await CLI.run(
      ["fetch", "--cache-dir", scratch.path + "/c", "--store", "s3://\(Self.bucket)/p", url],
      environment: wrong)
    #expect(fetch.status == 2)
    #expect(fetch.stderr.contains("AWS_SECRET_ACCESS_KEY"), "\(fetch.stderr)")
    #expect(fetch.stderr.contains("SignatureDoesNotMatch"), "\(fetch.stderr)")
    let serve = try await CLI.run(
      ["serve", "--listen", "127.0.0.1:0", "--key-file", keys, "--cache-dir", scratch.path + "/c"],
      environment: wrong.merging(["ATTACHKIT_STORE": "s3://\(Self.bucket)/p"]) { $1 })
    #expect(serve.status == 2)
    #expect(serve.stderr.contains("AWS_SECRET_ACCESS_KEY"), "\(serve.stderr)")

    let right = Self.environment(store)
    let missing = try await CLI.run(
      ["prefetch", "--cache-dir", scratch.path + "/c", "--store", "s3://no-such-bucket/p", "-"],
      stdin: url + "\n",
      environment: right)
    #expect(missing.status == 2)
    #expect(missing.stderr.contains("The bucket 'no-such-bucket' of --store"), "\(missing.stderr)")
    let serveMissing = try await CLI.run(
      [
        "serve", "--listen", "127.0.0.1:0", "--key-file", keys, "--cache-dir", scratch.path + "/c",
        "--store", "s3://no-such-bucket/p",
      ], environment: right)
    #expect(serveMissing.status == 2)
    #expect(serveMissing.stderr.contains("does not exist"), "\(serveMissing.stderr)")
  }

  @Test(
    "prefetch --store warms the fleet: fetch with an empty cache and a profile's credentials answers from the store"
  )
  func prefetchWarmsTheFleet() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    origin.serve("/push/a.png", body: try Media.bytes("png-rgba.png"), contentType: "image/png")
    let url = origin.url("/push/a.png")
    let location = "s3://\(Self.bucket)/campaign"
    let warm = try await CLI.run(
      ["prefetch", "--json", "--cache-dir", scratch.path + "/one", "--store", location, "-"],
      stdin: url + "\n",
      environment: Self.environment(store))
    #expect(warm.status == 0, "\(warm.stderr)")

    // Another machine: its own cache, its credentials in ~/.aws/credentials
    try FileManager.default.createDirectory(
      atPath: scratch.path + "/home/.aws", withIntermediateDirectories: true)
    try "[fleet]\naws_access_key_id = \(store.accessKey)\naws_secret_access_key = \(store.secretKey)\n".write(
      toFile: scratch.path + "/home/.aws/credentials", atomically: true, encoding: .utf8)
    var environment = Self.environment(store)
    environment["AWS_ACCESS_KEY_ID"] = ""
    environment["AWS_SECRET_ACCESS_KEY"] = ""
    environment["AWS_PROFILE"] = "fleet"
    environment["HOME"] = scratch.path + "/home"
    let cold = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/two", "--store", location, url],
      environment: environment)
    #expect(cold.status == 0, "\(cold.stderr)")
    let record = try #require(cold.jsonLines.first)
    #expect(record["source"] as? String == "cache")
    #expect(record["bytesTransferred"] as? Int == 0)
    #expect(origin.requestCount(path: "/push/a.png") == 1)
  }

  @Test(
    "a 44 MB video read from the store by a cold instance in constant memory: the reader never holds it whole"
  )
  func largeObjectReadInConstantMemory() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try Scratch()
    defer { scratch.remove() }
    // 9 s of 1080p H.264 at a near-lossless quantizer: about 44 MB, under the 50 MB video limit.
    let video = scratch.path + "/big.mp4"
    let made = try await CLI.run(
      program: "/usr/bin/ffmpeg",
      [
        "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30", "-t", "9",
        "-c:v", "libx264", "-preset", "ultrafast", "-qp", "1", "-pix_fmt", "yuv420p", "-movflags",
        "+faststart", video,
      ])
    try #require(made.status == 0, "\(made.stderr)")
    let bytes = try #require(FileManager.default.attributesOfItem(atPath: video)[.size] as? Int)
    try #require(bytes > 40_000_000, "the video is \(bytes) bytes")
    origin.serveFile(
      "/push/big.mp4", file: video, contentType: "video/mp4", headers: [("Cache-Control", "max-age=3600")])
    let url = origin.url("/push/big.mp4")
    let location = "s3://\(Self.bucket)/large"
    // GNU time's %M: the process's peak resident set, in KiB, as the last line of standard error.
    func peakKiB(_ run: CLI.Result) throws -> Int {
      try #require(run.stderr.split(separator: "\n").last.flatMap { Int($0) }, "\(run.stderr)")
    }
    // (The writer's peak is not judged here: GNU time reports the larger of the process and its
    // waited-for children, and the writer's decode check runs FFmpeg on 1080p frames in a worker.)
    let writer = try await CLI.run(
      ["prefetch", "--cache-dir", scratch.path + "/one", "--store", location, "-"], stdin: url + "\n",
      environment: Self.environment(store))
    #expect(writer.status == 0, "\(writer.stderr)")
    let reader = try await CLI.run(
      program: "/usr/bin/time",
      [
        "-f", "%M", CLI.attachkit, "fetch", "--json", "--cache-dir", scratch.path + "/two", "--store",
        location, url,
      ],
      environment: Self.environment(store))
    #expect(reader.status == 0, "\(reader.stderr)")
    let record = try #require(reader.jsonLines.first)
    #expect(record["source"] as? String == "cache")
    #expect(record["bytes"] as? Int == bytes)
    #expect(origin.requestCount(path: "/push/big.mp4") == 1)
    // Holding the file whole (as a store read into memory would) is over its size.
    let read = try peakKiB(reader)
    #expect(read * 1024 < bytes, "the reader's peak RSS \(read) KiB holds the \(bytes)-byte file")
  }
}
