import Foundation
import TestSupport
import TestTraits
import Testing

/// Files put in the cache by someone else (a symbolic link, a FIFO) where a content file was:
/// the server opens what it serves as the cache library does, even on a remembered hit.
@Suite("attachkit serve: hostile files in the cache", .serialized, .threadOfItsOwn)
struct HostileCacheTests {
  /// Serves `/a.jpg`, fetches it and asks again (a hit the server remembers for a second), then
  /// replaces its content file with what `replace` makes at that path.
  private func cachedThenReplaced(
    _ replace: (String) -> Int32
  ) async throws -> (
    origin: TestHTTPServer, workspace: Workspace, serve: ServeProcess, url: String, jpeg: [UInt8]
  ) {
    let origin = try TestHTTPServer.start()
    let workspace = try Workspace()
    let jpeg = try Media.bytes("jpeg-exif.jpg")
    origin.serve(
      "/a.jpg", body: jpeg, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=3600")])
    let serve = try await ServeProcess(workspace: workspace)
    let url = serve.url(try await serve.signed(origin.url("/a.jpg"), keyFile: workspace.keyFile))
    #expect(try await Curl.get(url).header("X-Attachment-Source") == "network")
    #expect(try await Curl.get(url).header("X-Attachment-Source") == "cache")
    let content = try #require(
      workspace.cacheFiles().first { $0.contains("content/") && $0.hasSuffix(".jpg") })
    let path = workspace.cache + "/" + content
    #expect(unlink(path) == 0)
    #expect(replace(path) == 0)
    return (origin, workspace, serve, url, jpeg)
  }

  @Test("a symbolic link to /etc/passwd in place of a content file is not served, even on a remembered hit")
  func symbolicLink() async throws {
    let (origin, workspace, serve, url, jpeg) = try await cachedThenReplaced {
      Glibc.symlink("/etc/passwd", $0)
    }
    defer { origin.stop() }
    defer { workspace.remove() }
    defer { serve.stop() }
    let answer = try await Curl.get(url)
    #expect(!String(decoding: answer.body, as: UTF8.self).contains("root:"))
    #expect(answer.status == 200)
    #expect(answer.body.elementsEqual(jpeg))
    #expect(answer.header("X-Attachment-Source") == "network")
  }

  @Test("a FIFO in place of a content file stalls nothing: answered, other requests served, SIGTERM exits")
  func fifo() async throws {
    let (origin, workspace, serve, url, jpeg) = try await cachedThenReplaced { mkfifo($0, 0o600) }
    defer { origin.stop() }
    defer { workspace.remove() }
    defer { serve.stop() }
    // Two at once, so that an event-loop thread each would be stuck on the old code.
    async let first = Curl.get(url, ["--max-time", "5"])
    async let second = Curl.get(url, ["--max-time", "5"])
    for answer in [try await first, try await second] {
      #expect(answer.status == 200)
      #expect(answer.body.elementsEqual(jpeg))
    }
    #expect(try await Curl.get(serve.url("/healthz"), ["--max-time", "5"]).status == 200)
    serve.stop()
    #expect(await serve.exitStatus(endingWithin: 10) == 0)
  }
}
