import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The pipeline end to end: real server, real libcurl, real libmagic, real files.
@Suite("AttachmentPipeline")
struct PipelineTests {
  /// A server, a fresh cache directory and a pipeline over them.
  struct Fixture {
    let server: TestHTTPServer
    let scratch: ScratchDirectory
    let pipeline: AttachmentPipeline

    init(configure: (inout PipelineConfiguration) -> Void = { _ in }) throws {
      server = try TestHTTPServer.start()
      scratch = try ScratchDirectory("pipeline")
      var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
      configuration.downloader.allowPrivateNetworks = true  // the test server is on loopback
      configure(&configuration)
      pipeline = try AttachmentPipeline(configuration: configuration)
    }

    func close() {
      server.stop()
      scratch.remove()
    }

    func temporaryFiles() -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: scratch.path + "/cache/v2/tmp")) ?? []
    }
  }

  @Test("a miss downloads, validates and publishes; the repeat is a hit even with the server gone")
  func hitAfterMiss() async throws {
    // Given a PNG served under a URL without extension and with a lying Content-Type
    let fixture = try Fixture()
    defer { fixture.close() }
    let png = try Samples.bytes("png-rgba.png")
    fixture.server.serve("/push/12345", body: png, contentType: "text/html")
    let url = fixture.server.url("/push/12345")

    // When it is asked for twice, the server stopped in between
    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    fixture.server.stop()
    let second = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))

    // Then the first came from the network, the second from the cache, same file and bytes
    #expect(first.source == .network)
    #expect(first.type == .png)
    #expect(first.uti == "public.png")
    #expect(first.path.hasSuffix(".png"))
    #expect(first.bytesTransferred == Int64(png.count))
    #expect(second.source == .cache)
    #expect(second.path == first.path)
    #expect(second.sha256 == first.sha256)
    #expect(try Data(contentsOf: URL(fileURLWithPath: second.path)) == Data(png))
    #expect(fixture.temporaryFiles().isEmpty)
  }

  @Test("spellings of one URL share one entry: host case, default port, fragment")
  func normalizedKeys() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/a.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let port = fixture.server.port
    _ = try await fixture.pipeline.attachment(for: "http://127.0.0.1:\(port)/a.jpg", timeout: .seconds(5))
    let again = try await fixture.pipeline.attachment(
      for: "HTTP://127.0.0.1:\(port)/a.jpg#fragment", timeout: .seconds(5))
    #expect(again.source == .cache)
    #expect(fixture.server.requestCount(path: "/a.jpg") == 1)
  }

  @Test("50 concurrent calls for one URL make one request")
  func singleFlight() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/v.mp4", body: try Samples.bytes("mp4-isom.mp4"), contentType: "video/mp4")
    let url = fixture.server.url("/v.mp4")
    let pipeline = fixture.pipeline

    let sources = try await withThrowingTaskGroup(of: AttachmentKit.Attachment.Source.self) { group in
      for _ in 0..<50 {
        group.addTask { try await pipeline.attachment(for: url, timeout: .seconds(10)).source }
      }
      return try await group.reduce(into: [AttachmentKit.Attachment.Source]()) { $0.append($1) }
    }

    #expect(sources.count == 50)
    #expect(fixture.server.requestCount(path: "/v.mp4") == 1)
  }

  @Test("a waiter that cancels leaves at once; the others still get the file")
  func singleFlightCancellation() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    fixture.server.route("/slow.jpg") { _, writer in
      usleep(400_000)
      writer.writeHead(
        status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", "\(jpeg.count)")])
      writer.write(jpeg)
    }
    let url = fixture.server.url("/slow.jpg")
    let pipeline = fixture.pipeline
    let patient = Task { try await pipeline.attachment(for: url, timeout: .seconds(5)) }
    let impatient = Task { try await pipeline.attachment(for: url, timeout: .seconds(5)) }
    try await Task.sleep(for: .milliseconds(100))
    let cancelledAt = ContinuousClock.now
    impatient.cancel()
    let impatientResult = await impatient.result
    #expect(ContinuousClock.now - cancelledAt < .milliseconds(100))
    #expect((impatientResult.failureError as? AttachmentError)?.code == .cancelled)
    let attachment = try await patient.value
    #expect(attachment.type == .jpeg)
    #expect(fixture.server.requestCount(path: "/slow.jpg") == 1)
  }

  @Test("a stale entry is revalidated: 304 keeps the content and refreshes the record")
  func revalidation() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let gif = try Samples.bytes("gif-static.gif")
    fixture.server.serve(
      "/r.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=0")], etag: "\"g1\""
    )
    let url = fixture.server.url("/r.gif")

    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    let second = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))

    #expect(first.source == .network)
    #expect(second.source == .revalidated)
    #expect(second.path == first.path)
    #expect(second.bytesTransferred == 0)
    let requests = fixture.server.requests(path: "/r.gif")
    #expect(requests.count == 2)
    #expect(requests.last?.header("If-None-Match") == "\"g1\"")
    #expect(try Data(contentsOf: URL(fileURLWithPath: second.path)) == Data(gif))
  }

  @Test("stale-if-error serves a stale copy, marked, when the server is gone")
  func staleIfError() async throws {
    let fixture = try Fixture { $0.useStaleOnError = true }
    defer { fixture.close() }
    fixture.server.serve(
      "/s.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png",
      headers: [("Cache-Control", "max-age=0")])
    let url = fixture.server.url("/s.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    fixture.server.stop()

    let stale = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))

    #expect(stale.source == .cache)
    #expect(stale.isStale)
    #expect(stale.warnings.contains { $0.contains("stale") })
  }

  @Test("without stale-if-error, a stale entry whose server is gone fails")
  func noStaleWithoutPolicy() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve(
      "/s.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png",
      headers: [("Cache-Control", "no-cache")])
    let url = fixture.server.url("/s.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    fixture.server.stop()
    await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    }
  }

  @Test("a refused file is never published and leaves nothing behind")
  func refusedNotPublished() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/photo.jpg", body: try Samples.bytes("webp-lossy.webp"), contentType: "image/jpeg")
    do {
      _ = try await fixture.pipeline.attachment(for: fixture.server.url("/photo.jpg"), timeout: .seconds(5))
      Issue.record("expected unsupported_type")
    } catch {
      #expect(error.code == .unsupportedType)
      #expect(error.detected == "image/webp")
    }
    let stats = try fixture.pipeline.cache.stats()
    #expect(stats.entries == 0)
    #expect(stats.contentFiles == 0)
    #expect(fixture.temporaryFiles().isEmpty)
  }

  @Test("an HTML page served as image/jpeg is refused after its first few KiB")
  func earlyRefusal() async throws {
    // Given 10 MiB of HTML served as a JPEG
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    var html = Array("<!DOCTYPE html><html><head><title>Login</title></head><body>".utf8)
    html += [UInt8](repeating: UInt8(ascii: "x"), count: 10 * 1024 * 1024)
    server.serve("/image.jpg", body: html, contentType: "image/jpeg")
    let scratch = try ScratchDirectory("early")
    defer { scratch.remove() }
    let counter = CountingInspector(wrapping: StreamingSniffer())

    // When it is downloaded with the streaming sniffer
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: server.url("/image.jpg"), directory: scratch.path, inspector: counter),
        timeout: .seconds(5))
      Issue.record("expected unsupported_type")
    } catch {
      // Then it stops with unsupported_type, having seen at most the 64 KiB window (plus the
      // chunk that crossed it)
      #expect(error.code == .unsupportedType)
      #expect(error.detected == "text/html")
    }
    #expect(counter.bytesSeen <= 64 * 1024 + 64 * 1024)
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("a body over its type's limit stops at the limit, and a declared one before the body")
  func typeLimits() async throws {
    let fixture = try Fixture { $0.limits.maximumImageBytes = 100_000 }
    defer { fixture.close() }
    // A real JPEG header followed by 1 MB of padding, no Content-Length announced in advance
    var big = try Samples.bytes("jpeg-baseline.jpg")
    big.removeLast(2)
    big += [UInt8](repeating: 0, count: 1_000_000)
    let body = big
    fixture.server.route("/big.jpg") { _, writer in
      writer.writeHead(status: 200, headers: [("Content-Type", "image/jpeg"), ("Connection", "close")])
      writer.write(body)
      writer.closeConnection()
    }
    fixture.server.serve("/declared.jpg", body: body, contentType: "image/jpeg")
    for path in ["/big.jpg", "/declared.jpg"] {
      do {
        _ = try await fixture.pipeline.attachment(for: fixture.server.url(path), timeout: .seconds(5))
        Issue.record("\(path) should be too large")
      } catch {
        #expect(error.code == .tooLarge, "\(path): \(error)")
      }
    }
    #expect(fixture.temporaryFiles().isEmpty)
  }

  @Test("identical content under two URLs is stored once")
  func deduplication() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    fixture.server.serve("/one.wav", body: wav, contentType: "audio/wav")
    fixture.server.serve("/two", body: wav, contentType: "application/octet-stream")
    let one = try await fixture.pipeline.attachment(for: fixture.server.url("/one.wav"), timeout: .seconds(5))
    let two = try await fixture.pipeline.attachment(for: fixture.server.url("/two"), timeout: .seconds(5))
    #expect(one.path == two.path)
    let stats = try fixture.pipeline.cache.stats()
    #expect(stats.entries == 2)
    #expect(stats.contentFiles == 1)
  }

  @Test("no-store responses are delivered but not indexed")
  func noStore() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve(
      "/private.png", body: try Samples.bytes("png-palette.png"), contentType: "image/png",
      headers: [("Cache-Control", "no-store")])
    let url = fixture.server.url("/private.png")
    let first = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    let second = try await fixture.pipeline.attachment(for: url, timeout: .seconds(5))
    #expect(first.source == .network && second.source == .network)
    #expect(FileManager.default.fileExists(atPath: second.path))
    #expect(try fixture.pipeline.cache.stats().entries == 0)
  }
}

/// Wraps an inspector and counts the body bytes it was shown.
final class CountingInspector: ResponseInspector, @unchecked Sendable {
  private let inner: any ResponseInspector
  private let lock = NSLock()
  private var seen: Int64 = 0

  init(wrapping inner: any ResponseInspector) { self.inner = inner }

  var bytesSeen: Int64 { lock.withLock { seen } }

  func inspect(head: ResponseHead) -> InspectorVerdict { inner.inspect(head: head) }

  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict {
    lock.withLock { seen = max(seen, offset + Int64(chunk.count)) }
    return inner.inspect(body: chunk, at: offset)
  }
}

extension Result {
  var failureError: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
