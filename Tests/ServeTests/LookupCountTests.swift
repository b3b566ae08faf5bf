import Foundation
import Glibc
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// One cache lookup per request of `attachkit serve`: the handler's fast path and the pipeline
/// share it. Every lookup reads the URL's record file, so strace, attached to the running
/// server, counts the lookups as read-only opens of that file.
@Suite("attachkit serve: one cache lookup per request", .serialized, .threadOfItsOwn)
struct ServeLookupCountTests {
  @Test("a miss and an info request each read the URL's record once; a hit at most once")
  func oneLookupPerRequest() async throws {
    let strace = "/usr/bin/strace"
    try #require(
      FileManager.default.isExecutableFile(atPath: strace), "strace is missing (scripts/install-deps.sh)")
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/a.gif", body: gif, contentType: "image/gif")
    origin.serve("/i.gif", body: gif, contentType: "image/gif")
    // Other bytes for the hit: a publish of identical content re-dates the shared file, and the
    // hit would then re-hash it and reseal its record (one more read, counted here otherwise)
    origin.serve("/h.gif", body: try Media.bytes("gif-animated.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let fileURL = origin.url("/a.gif")
    let infoURL = origin.url("/i.gif")
    let filePath = try await serve.signed(fileURL, keyFile: workspace.keyFile)
    let infoPath = try await serve.signed(infoURL, keyFile: workspace.keyFile, route: "info")
    let hitURL = origin.url("/h.gif")
    let hitPath = try await serve.signed(hitURL, keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(hitPath)).status == 200)  // cached before the count starts

    // Given strace attached to every thread of the server (observed: the kernel names a tracer)
    let log = workspace.path + "/strace.log"
    // A clean spawn: strace must see the SIGTERM that detaches it (Foundation's Process would
    // pass on the pool thread's blocked signals).
    let tracer = try SpawnedProcess([
      strace, "-f", "-qq", "-o", log, "-e", "trace=open,openat", "-p",
      String(serve.process.processIdentifier),
    ])
    defer { tracer.stop() }
    let attached = ContinuousClock.now + .seconds(10)
    while Self.tracerPID(serve.process.processIdentifier) == 0, ContinuousClock.now < attached {
      try await Task.sleep(for: .milliseconds(5))
    }
    try #require(Self.tracerPID(serve.process.processIdentifier) != 0, "strace did not attach")

    // When a new URL is asked for, an info request for another, and a cached one (a hit)
    #expect(try await Curl.get(serve.url(filePath)).status == 200)
    #expect(try await Curl.get(serve.url(infoPath)).status == 200)
    #expect(try await Curl.get(serve.url(hitPath)).header("X-Attachment-Source") == "cache")
    await tracer.terminate()  // detaches and flushes its log; the server goes on

    // Then the miss and the info request read their records once each (the handler's lookup
    // is the pipeline's), and the hit at most once (the hit memo may answer it unread)
    let lines = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? []
    let cache = try AttachmentCache(configuration: CacheConfiguration(directory: workspace.cache))
    let reads = { (url: String) -> Int in
      guard let path = cache.recordPath(forURL: url) else { return -1 }
      let record = "\(path)\""
      return lines.filter { $0.contains(record) && $0.contains("O_RDONLY") }.count
    }
    #expect(reads(fileURL) == 1)
    #expect(reads(infoURL) == 1)
    #expect((0...1).contains(reads(hitURL)), "record reads for the hit: \(reads(hitURL))")
    #expect(origin.requestCount(path: "/a.gif") == 1 && origin.requestCount(path: "/h.gif") == 1)
  }

  /// The pid tracing `pid` (0: none), from `/proc/PID/status`.
  static func tracerPID(_ pid: Int32) -> Int {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("TracerPid:") }
    return line.flatMap { Int($0.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
  }
}
