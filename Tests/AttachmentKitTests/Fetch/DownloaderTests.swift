import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The downloader against a real server on 127.0.0.1 and real libcurl: successful transfers.
@Suite("Downloader: successful transfers", .threadOfItsOwn)
struct DownloaderTests {
  @Test("streams a body to a 0600 file with the right bytes, hash, headers and timings")
  func downloadsToFile() async throws {
    // Given a server with a 1 MiB body carrying validators
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let body = testBytes(count: 1 << 20)
    server.serve(
      "/files/blob", body: body, contentType: "image/jpeg", etag: "\"v1\"",
      lastModified: "Tue, 01 Sep 2026 10:00:00 GMT")
    let scratch = try ScratchDirectory("dl")
    defer { scratch.remove() }

    // When it is downloaded
    let downloader = Downloader(configuration: .loopback)
    let download = try await downloader.download(
      DownloadRequest(url: server.url("/files/blob"), directory: scratch.path), timeout: generousTimeout)

    // Then the file holds exactly the body, the hash is that of the body, and the head is kept
    let file = try #require(download.file)
    defer { unlink(file) }
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(body))
    let expected = SHA256Hasher()
    body.withUnsafeBytes { expected.update($0) }
    #expect(download.sha256 == expected.finalize())
    #expect(download.bytesReceived == Int64(body.count))
    #expect(download.status == 200)
    #expect(download.headers.etag == "\"v1\"")
    #expect(download.headers.lastModified == "Tue, 01 Sep 2026 10:00:00 GMT")
    #expect(download.headers.contentType == "image/jpeg")
    #expect(download.headers.contentLength == Int64(body.count))
    #expect(download.timings.totalMicroseconds > 0)
    #expect(download.timings.firstByteMicroseconds >= download.timings.connectMicroseconds)
    let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    // and the request asked for identity encoding
    #expect(server.requests(path: "/files/blob").first?.header("Accept-Encoding") == "identity")
  }

  @Test("follows redirects within the limit and reports the final URL")
  func followsRedirects() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/a", body: Array("hello".utf8), contentType: "text/plain")
    let scratch = try ScratchDirectory("redir")
    defer { scratch.remove() }

    let download = try await Downloader(configuration: .loopback).download(
      DownloadRequest(url: server.url("/redirect/4/files/a"), directory: scratch.path),
      timeout: generousTimeout)

    #expect(download.redirectCount == 5)
    #expect(download.finalURL == server.url("/files/a"))
    #expect(download.bytesReceived == 5)
    if let file = download.file { unlink(file) }
  }

  @Test("a conditional request answered 304 is a result with no file")
  func notModified() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/files/v", body: testBytes(count: 4096), etag: "\"abc\"")
    let scratch = try ScratchDirectory("304")
    defer { scratch.remove() }

    var request = DownloadRequest(url: server.url("/files/v"), directory: scratch.path)
    request.ifNoneMatch = "\"abc\""
    let download = try await Downloader(configuration: .loopback).download(request, timeout: generousTimeout)

    #expect(download.isNotModified)
    #expect(download.file == nil)
    #expect(download.digest == .noBody)
    #expect(server.requests(path: "/files/v").first?.header("If-None-Match") == "\"abc\"")
    #expect(scratch.contents().isEmpty)
  }

  @Test("a gzip body is stored as sent: no content decoding")
  func identityEncoding() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("gzip")
    defer { scratch.remove() }

    let download = try await Downloader(configuration: .loopback).download(
      DownloadRequest(url: server.url("/fault/gzip"), directory: scratch.path), timeout: generousTimeout)

    let file = try #require(download.file)
    defer { unlink(file) }
    #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(TestHTTPServer.gzipBody))
    #expect(download.headers.contentEncoding == "gzip")
  }

  @Test("64 concurrent downloads all succeed and reuse connections")
  func concurrentDownloadsReuseConnections() async throws {
    // Given one 256 KiB file and a downloader allowing 8 connections per host
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let body = testBytes(count: 256 * 1024, seed: 7)
    server.serve("/files/shared", body: body)
    let scratch = try ScratchDirectory("many")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    configuration.maximumConnectionsPerHost = 8
    let downloader = Downloader(configuration: configuration)

    // When 64 tasks download it at once
    let hashes = try await withThrowingTaskGroup(of: String.self) { group in
      for _ in 0..<64 {
        group.addTask {
          let download = try await downloader.download(
            DownloadRequest(url: server.url("/files/shared"), directory: scratch.path),
            timeout: .seconds(20))
          if let file = download.file { unlink(file) }
          return download.sha256 ?? "none"
        }
      }
      return try await group.reduce(into: [String]()) { $0.append($1) }
    }

    // Then every one has the right bytes (its digest is the body's, by an independent tool),
    // over far fewer connections than requests
    let expected = try await sha256sum(body, in: scratch.path)
    #expect(expected.count == 64)
    #expect(hashes.allSatisfy { $0 == expected }, "\(Set(hashes)) != \(expected)")
    #expect(server.requestCount(path: "/files/shared") == 64)
    #expect(server.connectionCount(path: "/files/shared") <= 8)
    #expect(scratch.leftovers().isEmpty)
  }

  @Test("connections stay pooled after a burst thins out: a second burst of 8 reuses the first burst's 8")
  func connectionsStayPooledBetweenBursts() async throws {
    // Given a route whose answers the test releases one at a time, in arrival order
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let gate = ReleaseGate()
    server.route("/burst") { _, writer in
      guard gate.arriveAndWait() else { return }
      _ = writer.respond(status: 200, body: Array("ok".utf8))
    }
    let scratch = try ScratchDirectory("bursts")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    configuration.maximumConnectionsPerHost = 8
    let downloader = Downloader(configuration: configuration)
    let fetch: @Sendable () async throws -> Void = {
      let download = try await downloader.download(
        DownloadRequest(url: server.url("/burst"), directory: scratch.path), timeout: .seconds(15))
      download.file.map { _ = unlink($0) }
    }

    // When a first burst of 8 holds 8 connections open and then ends one transfer at a time
    // (each answer released only after the previous download has finished, so the transfers
    // still running dwindle to one, as at the tail of any batch)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 { group.addTask(operation: fetch) }
      #expect(await poll(upTo: .seconds(10)) { gate.arrivals >= 8 })
      for _ in 0..<8 {
        gate.release(1)
        try await group.next()
      }
    }
    // and a second burst of 8 follows
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<8 { group.addTask(operation: fetch) }
      #expect(await poll(upTo: .seconds(10)) { gate.arrivals >= 16 })
      gate.release(8)
      try await group.waitForAll()
    }

    // Then the second burst found all 8 connections of the first idle in the pool
    #expect(server.requestCount(path: "/burst") == 16)
    #expect(server.totalConnections == 8, "\(server.totalConnections) connections for two bursts of 8")
  }

}

/// Holds each request until the test releases it, in arrival order.
final class ReleaseGate: @unchecked Sendable {
  private let condition = NSCondition()
  private var arrived = 0
  private var released = 0

  /// How many requests have arrived.
  var arrivals: Int { condition.withLock { arrived } }

  /// Lets the next `count` held requests go.
  func release(_ count: Int) {
    condition.withLock {
      released += count
      condition.broadcast()
    }
  }

  /// Called by a request: waits (at most 10 s) until it is released; false on time-out.
  func arriveAndWait() -> Bool {
    condition.withLock {
      arrived += 1
      let ticket = arrived
      let limit = Date().addingTimeInterval(10)
      while released < ticket {
        if !condition.wait(until: limit) { return false }
      }
      return true
    }
  }
}
