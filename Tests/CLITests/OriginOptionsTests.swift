import Foundation
import TestSupport
import TestTraits
import Testing

/// The command line's options about origins and keys (issue #37), run as a user runs them.
@Suite("attachkit: origins and keys", .threadOfItsOwn)
struct OriginOptionsTests {
  @Test(
    "--cache-key-ignore preset:s3: two presigned URLs of one file, one origin request; a bad preset is a usage error"
  )
  func presignedURLs() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve(
      "/o.jpg", body: try Media.bytes("jpeg-exif.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    let scratch = try Scratch()
    defer { scratch.remove() }
    let urls = ["1", "2"].map {
      server.url("/o.jpg") + "?X-Amz-Date=2026120\($0)T000000Z&X-Amz-Expires=60&X-Amz-Signature=\($0)\($0)"
    }
    for url in urls {
      let result = try await CLI.run(
        ["fetch", "--json", "--cache-dir", scratch.path + "/c", "--cache-key-ignore", "preset:s3", url])
      #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
    }
    #expect(server.requestCount(path: "/o.jpg") == 1)
    // The environment variable does the same; without either, the second URL is fetched again
    let viaEnvironment = try await CLI.run(
      ["fetch", "--json", "--cache-dir", scratch.path + "/c", urls[0] + "&X-Amz-Credential=x"],
      environment: ["ATTACHKIT_CACHE_KEY_IGNORE": "preset:s3"])
    #expect(viaEnvironment.jsonLines.first?["source"] as? String == "cache")
    _ = try await CLI.run(["fetch", "--json", "--cache-dir", scratch.path + "/c", urls[1]])
    #expect(server.requestCount(path: "/o.jpg") == 2)

    let bad = try await CLI.run(
      ["fetch", "--cache-dir", scratch.path + "/c", "--cache-key-ignore", "preset:s4", urls[0]])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("preset:s3"), "\(bad.stderr)")
  }
}
