import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The pipeline end to end: real server, real libcurl, real libmagic, real files.
@Suite("AttachmentPipeline", .threadOfItsOwn)
struct PipelineTests {
  typealias Fixture = PipelineFixture

  @Test("a miss downloads, validates and publishes; the repeat is a hit even with the server gone")
  func hitAfterMiss() async throws {
    // Given a PNG served under a URL without extension and with a lying Content-Type
    let fixture = try Fixture()
    defer { fixture.close() }
    let png = try Samples.bytes("png-rgba.png")
    fixture.server.serve("/push/12345", body: png, contentType: "text/html")
    let url = fixture.server.url("/push/12345")

    // When it is asked for twice, the server stopped in between
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    fixture.server.stop()
    let second = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

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
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("spellings of one URL share one entry: host case, default port, fragment")
  func normalizedKeys() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/a.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let port = fixture.server.port
    _ = try await fixture.pipeline.attachment(for: "http://127.0.0.1:\(port)/a.jpg", timeout: generousTimeout)
    let again = try await fixture.pipeline.attachment(
      for: "HTTP://127.0.0.1:\(port)/a.jpg#fragment", timeout: generousTimeout)
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

    let paths = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<50 {
        // (the time is not under test: under ThreadSanitizer, run one test at a time, the 50
        // calls took longer than 10 s once, and among 203 TSan tests in parallel longer than
        // 30 s once, where they take 0.04 s alone; a hang still fails, at 120 s)
        group.addTask { try await pipeline.attachment(for: url, timeout: .seconds(120)).path }
      }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }

    // Every caller got the same published file, with the sample's bytes, from one request
    #expect(Set(paths).count == 1)
    let path = try #require(paths.first)
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(try Samples.bytes("mp4-isom.mp4")))
    #expect(fixture.server.requestCount(path: "/v.mp4") == 1)
  }

  @Test(
    "a call whose lookup missed just before another call's fetch of the URL finished gets that fetch's file, with no second request"
  )
  func missBeforeAFinishedFlight() async throws {
    // Given a caller that looked the URL up (a miss), and then, before it could join a flight,
    // another call fetched and published the file (the order forced: each step awaited)
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/v.mp4", body: try Samples.bytes("mp4-isom.mp4"), contentType: "video/mp4")
    let url = try AttachmentURL(fixture.server.url("/v.mp4"))
    let pipeline = fixture.pipeline
    let generation = pipeline.flightGeneration
    let lookup = pipeline.lookup(url)
    guard case .miss = lookup else { throw LookupTests.LookupError.unexpected("a miss") }
    let other = try await pipeline.attachment(AttachmentRequest(url: url, deadline: .now + generousTimeout))
    #expect(other.source == .network)

    // When the first caller goes on from its miss
    let late = try await pipeline.attachment(
      for: url, after: lookup, deadline: .now + generousTimeout, start: .now, lookedUpAt: generation)

    // Then it is answered from the cache with the same file, and the origin saw one request
    #expect(late.source == .cache)
    #expect(late.path == other.path)
    #expect(fixture.server.requestCount(path: "/v.mp4") == 1)
  }

  @Test("a waiter that cancels leaves at once; the others still get the file")
  func singleFlightCancellation() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    // The answer is held until the test lets it go (at most 10 s, so a broken test fails)
    let released = Flag()
    let arrived = Flag()
    let answered = Flag()
    fixture.server.route("/slow.jpg") { _, writer in
      arrived.set()
      let limit = ContinuousClock.now + .seconds(10)
      while !released.isSet, ContinuousClock.now < limit {
        guard writer.sleep(milliseconds: 5) else { return }
      }
      answered.set()
      writer.writeHead(
        status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", "\(jpeg.count)")])
      writer.write(jpeg)
    }
    let url = fixture.server.url("/slow.jpg")
    let pipeline = fixture.pipeline
    let patient = Task { try await pipeline.attachment(for: url, timeout: .seconds(20)) }
    let impatient = Task { try await pipeline.attachment(for: url, timeout: .seconds(20)) }
    // Both callers are seen waiting on the one fetch, which has reached the server
    let checked = try AttachmentURL(url)
    try #require(await poll(upTo: eventWait) { pipeline.callersWaiting(for: checked) == 2 })
    try #require(await arrived.wait(upTo: eventWait))
    impatient.cancel()
    let impatientResult = await impatient.result
    // The cancelled caller is answered while the fetch is still held: it did not wait for it
    #expect(!answered.isSet, "the cancelled caller waited for the shared fetch")
    #expect((impatientResult.failureError as? AttachmentError)?.code == .cancelled)
    #expect(pipeline.callersWaiting(for: checked) == 1)
    released.set()
    let attachment = try await patient.value
    #expect(attachment.type == .jpeg)
    #expect(fixture.server.requestCount(path: "/slow.jpg") == 1)
  }

  @Test(
    "a stale entry is revalidated: 304 keeps the content and refreshes the record's freshness",
    arguments: ["etag", "last-modified"])
  func revalidation(validator: String) async throws {
    // Given a response that is stale at once, whose 304 makes it fresh for 10 minutes
    let fixture = try Fixture()
    defer { fixture.close() }
    let gif = try Samples.bytes("gif-static.gif")
    let lastModified = "Tue, 01 Dec 2026 10:00:00 GMT"
    let validatorHeader = validator == "etag" ? ("ETag", "\"g1\"") : ("Last-Modified", lastModified)
    fixture.server.route("/r.gif") { request, writer in
      let matches =
        validator == "etag"
        ? request.header("If-None-Match") == "\"g1\"" : request.header("If-Modified-Since") == lastModified
      if matches {
        _ = writer.respond(status: 304, headers: [validatorHeader, ("Cache-Control", "max-age=600")])
      } else {
        _ = writer.respond(
          status: 200,
          headers: [("Content-Type", "image/gif"), validatorHeader, ("Cache-Control", "max-age=0")], body: gif
        )
      }
    }
    let url = fixture.server.url("/r.gif")

    // When it is fetched, fetched again (stale: revalidated), and a third time
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let second = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let third = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then the 304 kept the content and the refreshed record answers the third call alone
    #expect(first.source == .network)
    #expect(second.source == .revalidated)
    #expect(second.path == first.path)
    #expect(second.bytesTransferred == 0)
    #expect(third.source == .cache, "the 304's max-age=600 was not stored")
    let requests = fixture.server.requests(path: "/r.gif")
    #expect(requests.count == 2)
    if validator == "etag" {
      #expect(requests.last?.header("If-None-Match") == "\"g1\"")
    } else {
      #expect(requests.last?.header("If-Modified-Since") == lastModified)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: third.path)) == Data(gif))
  }

  /// A revalidation where the `200` and the `304` differ: what each sends, and the lifetime
  /// (in seconds) the merged headers give the refreshed copy.
  struct Revalidation: Sendable, CustomTestStringConvertible {
    var name: String
    var full: [(String, String)]
    var notModified: [(String, String)]
    var lifetime: Double
    var testDescription: String { name }
  }

  static let revalidations = [
    // The 200's Expires has passed (as "Expires: 0" or a past date says): stale at once. A 304
    // repeating only the ETag keeps it, so the copy stays stale, not the default hour fresh.
    Revalidation(
      name: "past Expires, 304 with only the ETag", full: [("Expires", "Thu, 01 Jan 2026 00:00:00 GMT")],
      notModified: [], lifetime: 0),
    // The 304's own max-age replaces the 200's max-age=0 (and outweighs the stored Expires).
    Revalidation(
      name: "max-age=0 and a far Expires, 304 with max-age=300",
      full: [("Cache-Control", "max-age=0"), ("Expires", "Fri, 01 Jan 2100 00:00:00 GMT")],
      notModified: [("Cache-Control", "max-age=300")], lifetime: 300),
    // A 304 with its own max-age over a stored, past Expires.
    Revalidation(
      name: "past Expires, 304 with max-age=120", full: [("Expires", "Thu, 01 Jan 2026 00:00:00 GMT")],
      notModified: [("Cache-Control", "max-age=120")], lifetime: 120),
  ]

  @Test(
    "a 304 merges into the stored headers: what it does not repeat (Expires) is kept, what it sends (max-age) replaces",
    arguments: revalidations)
  func revalidationMerges(_ revalidation: Revalidation) async throws {
    // Given a copy stale at once, revalidated by a 304 that differs from its 200
    let fixture = try Fixture()
    defer { fixture.close() }
    let gif = try Samples.bytes("gif-static.gif")
    fixture.server.route("/m.gif") { request, writer in
      if request.header("If-None-Match") == "\"m1\"" {
        _ = writer.respond(status: 304, headers: [("ETag", "\"m1\"")] + revalidation.notModified)
      } else {
        _ = writer.respond(
          status: 200, headers: [("Content-Type", "image/gif"), ("ETag", "\"m1\"")] + revalidation.full,
          body: gif)
      }
    }
    let url = fixture.server.url("/m.gif")

    // When it is fetched, revalidated, and asked for a third time
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let second = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let third = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then the refreshed copy lives exactly what the merged headers say
    #expect(first.source == .network)
    #expect(second.source == .revalidated)
    let fetchedAt = try #require(second.fetchedAt)
    let freshUntil = try #require(second.freshUntil)
    // (now + lifetime) - now: exact but for the last bits of a Double near 1.8e9.
    #expect(
      abs(freshUntil - fetchedAt - revalidation.lifetime) < 0.001, "lifetime \(freshUntil - fetchedAt) s")
    // And the third call follows it: revalidated again when stale, a hit when fresh
    #expect(third.source == (revalidation.lifetime == 0 ? .revalidated : .cache))
    #expect(fixture.server.requestCount(path: "/m.gif") == (revalidation.lifetime == 0 ? 3 : 2))
  }

  @Test("stale-if-error serves a stale copy, marked, when the server is gone")
  func staleIfError() async throws {
    let fixture = try Fixture { $0.useStaleOnError = true }
    defer { fixture.close() }
    fixture.server.serve(
      "/s.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png",
      headers: [("Cache-Control", "max-age=0")])
    let url = fixture.server.url("/s.png")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    fixture.server.stop()

    let stale = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

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
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    fixture.server.stop()
    // The revalidation's own failure, not any error (a deadline, say, would hide a stale copy
    // served and then dropped, or a revalidation never tried)
    let error = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    }
    #expect(error?.code == .connectFailed, "\(String(describing: error))")
  }

  @Test("a refused file is never published and leaves nothing behind")
  func refusedNotPublished() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/photo.jpg", body: try Samples.bytes("webp-lossy.webp"), contentType: "image/jpeg")
    do {
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/photo.jpg"), timeout: generousTimeout)
      Issue.record("expected unsupported_type")
    } catch {
      #expect(error.code == .unsupportedType)
      #expect(error.detected == "image/webp")
    }
    let stats = try fixture.pipeline.cache.stats()
    #expect(stats.entries == 0)
    #expect(stats.contentFiles == 0)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("through the pipeline, an HTML page served as image/jpeg is refused within its first 64 KiB")
  func earlyRefusal() async throws {
    // Given a page that declares 10 MiB but sends only 64 KiB of HTML, then waits for the
    // client to hang up: a client that needed more than the promised 64 KiB would wait here
    // until its deadline instead
    let fixture = try Fixture()
    defer { fixture.close() }
    let page = Array("<!DOCTYPE html><html><head><title>Login</title></head><body>".utf8)
    let promised = 64 * 1024  // the README's promise, not the constant that implements it
    let window = page + [UInt8](repeating: UInt8(ascii: "x"), count: promised - page.count)
    let hungUp = Flag()
    fixture.server.route("/image.jpg") { _, writer in
      _ = writer.writeHead(
        status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", String(10 << 20))])
      _ = writer.write(window)
      writer.waitForClientToClose()
      hungUp.set()
    }

    // When the pipeline fetches it
    var caught: AttachmentError?
    do {
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/image.jpg"), timeout: generousTimeout)
    } catch {
      caught = error
    }

    // Then it is refused as HTML from those bytes, and nothing is left
    #expect(caught?.code == .unsupportedType, "\(String(describing: caught))")
    #expect(caught?.detected == "text/html")
    #expect(await hungUp.wait(upTo: eventWait))
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test(
    "a body over its type's limit stops at the limit as it streams; a declared one as soon as its first bytes name the type",
    arguments: [false, true])
  func typeLimits(declared: Bool) async throws {
    // Given a 100 KB image limit and a JPEG that either streams one byte past it with no length,
    // or declares 1 MB and sends only its first 8 KiB (the type is known from those); either way
    // the server then waits for the client to hang up, so a client that waited for the whole
    // body (to check its size afterwards) would hit its deadline
    let fixture = try Fixture { $0.limits.maximumImageBytes = 100_000 }
    defer { fixture.close() }
    var jpeg = try Samples.bytes("jpeg-baseline.jpg")
    jpeg.removeLast(2)
    let overLimit = jpeg + [UInt8](repeating: 0, count: 100_001 - jpeg.count)
    let firstBytes = Array(overLimit.prefix(8192))
    let hungUp = Flag()
    fixture.server.route("/big.jpg") { _, writer in
      if declared {
        _ = writer.writeHead(
          status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", "1000000")])
        _ = writer.write(firstBytes)
      } else {
        _ = writer.writeHead(status: 200, headers: [("Content-Type", "image/jpeg"), ("Connection", "close")])
        _ = writer.write(overLimit)
      }
      writer.waitForClientToClose()
      hungUp.set()
    }

    var caught: AttachmentError?
    do {
      _ = try await fixture.pipeline.attachment(for: fixture.server.url("/big.jpg"), timeout: generousTimeout)
    } catch {
      caught = error
    }

    #expect(caught?.code == .tooLarge, "\(String(describing: caught))")
    #expect(await hungUp.wait(upTo: eventWait))
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }

  @Test("a miss whose deadline has passed is answered at once: no request, no file, nothing published")
  func passedDeadline() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    fixture.server.serve("/late.png", body: try Samples.bytes("png-rgba.png"))
    let start = ContinuousClock.now
    do {
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/late.png"), deadline: start - .milliseconds(1))
      Issue.record("a passed deadline should fail")
    } catch {
      #expect(error.code == .deadlineExceeded, "\(error)")
    }
    #expect(ContinuousClock.now - start < deadlineMargin)
    #expect(fixture.server.totalConnections == 0)
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
    #expect(fixture.pipeline.cachedAttachment(for: fixture.server.url("/late.png")) == nil)
  }

  @Test("identical content under two URLs is stored once")
  func deduplication() async throws {
    let fixture = try Fixture()
    defer { fixture.close() }
    let wav = try Samples.bytes("wav-pcm16.wav")
    fixture.server.serve("/one.wav", body: wav, contentType: "audio/wav")
    fixture.server.serve("/two", body: wav, contentType: "application/octet-stream")
    let one = try await fixture.pipeline.attachment(
      for: fixture.server.url("/one.wav"), timeout: generousTimeout)
    let two = try await fixture.pipeline.attachment(for: fixture.server.url("/two"), timeout: generousTimeout)
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
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let second = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
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
