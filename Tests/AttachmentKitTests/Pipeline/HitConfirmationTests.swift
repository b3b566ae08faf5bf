import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Key by object, authorize by request (issue #52, item 1): with `preset:s3`, a forged presigned
/// URL, or the bare path, was answered from the cache with another caller's private object and
/// the origin never asked.
@Suite("Hit confirmation: a presigned URL's signature authorizes", .threadOfItsOwn)
struct HitConfirmationTests {
  /// An S3-like origin: `/s3/secret-alice.png` answers only a request whose `X-Amz-Signature`
  /// is one it issued (`alice`, `bob`), with an `ETag`, and `304` to a matching `If-None-Match`;
  /// anything else is `403`.
  static func origin() throws -> (TestHTTPServer, [UInt8]) {
    let server = try TestHTTPServer.start()
    let secret = try Samples.bytes("png-rgba.png")
    server.route("/s3/secret-alice.png") { request, writer in
      let query = request.query ?? ""
      let signed = ["X-Amz-Signature=alice", "X-Amz-Signature=bob"].contains { query.contains($0) }
      guard signed else {
        _ = writer.respond(
          status: 403, headers: [("Content-Type", "application/xml")],
          body: Array("<Error><Code>SignatureDoesNotMatch</Code></Error>".utf8))
        return
      }
      if request.header("If-None-Match") == "\"v1\"" {
        _ = writer.respond(status: 304, headers: [("ETag", "\"v1\"")])
        return
      }
      _ = writer.respond(
        status: 200,
        headers: [("Content-Type", "image/png"), ("ETag", "\"v1\""), ("Cache-Control", "max-age=600")],
        body: secret)
    }
    return (server, secret)
  }

  /// A presigned URL for `signature`, dated now, valid `expires` seconds.
  static func presigned(_ server: TestHTTPServer, _ signature: String, expires: Int = 600, ago: Double = 0)
    -> String
  {
    let date = Date(timeIntervalSinceNow: -ago)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
    return server.url(
      "/s3/secret-alice.png?X-Amz-Date=\(formatter.string(from: date))&X-Amz-Expires=\(expires)&X-Amz-Signature=\(signature)"
    )
  }

  static func pipeline(_ scratch: ScratchDirectory, staleOnError: Bool = false) throws -> AttachmentPipeline {
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.cache.keyRules = try CacheKeyRules(["preset:s3"])
    configuration.useStaleOnError = staleOnError
    return try AttachmentPipeline(configuration: configuration)
  }

  @Test(
    "a forged signature and the bare path are refused by the origin, asked with their own URL; nothing of the file leaks"
  )
  func forgedAndBare() async throws {
    let (server, secret) = try Self.origin()
    defer { server.stop() }
    let scratch = try ScratchDirectory("hit-confirmation")
    defer { scratch.remove() }
    let pipeline = try Self.pipeline(scratch, staleOnError: true)
    let aliceURL = Self.presigned(server, "alice")
    let alice = try await pipeline.attachment(for: aliceURL, timeout: .seconds(20))
    #expect(alice.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: alice.path)) == Data(secret))

    for mallory in [Self.presigned(server, "forged"), server.url("/s3/secret-alice.png")] {
      server.resetCounters()
      do {
        let answer = try await pipeline.attachment(for: mallory, timeout: .seconds(20))
        Issue.record("\(mallory) was answered from \(answer.source)")
      } catch {
        #expect(error.code == .httpStatus && error.httpStatus == 403, "\(error)")
        // The refusal says nothing of the cached file: neither its size nor its type.
        #expect(!error.message.contains("\(secret.count)") && !error.message.lowercased().contains("png"))
      }
      // The origin was asked, with Mallory's own URL, and conditionally (no body to move).
      let asked = server.requests(path: "/s3/secret-alice.png")
      #expect(asked.count == 1, "\(asked.map(\.target))")
      #expect(asked.first.map { "http://127.0.0.1:\(server.port)" + $0.target } == mallory)
      #expect(asked.first?.header("If-None-Match") == "\"v1\"")
    }
    // Alice's own URL is still a hit, with no request.
    server.resetCounters()
    let again = try await pipeline.attachment(for: aliceURL, timeout: .seconds(20))
    #expect(again.source == .cache)
    #expect(server.requests(path: "/s3/secret-alice.png").isEmpty)
  }

  @Test(
    "another valid signature is confirmed by a 304 and delivered; then remembered: its next hit asks nothing")
  func confirmedOnce() async throws {
    let (server, _) = try Self.origin()
    defer { server.stop() }
    let scratch = try ScratchDirectory("hit-confirmation-bob")
    defer { scratch.remove() }
    let pipeline = try Self.pipeline(scratch)
    let aliceURL = Self.presigned(server, "alice")
    _ = try await pipeline.attachment(for: aliceURL, timeout: .seconds(20))
    let bobURL = Self.presigned(server, "bob")
    server.resetCounters()
    let bob = try await pipeline.attachment(for: bobURL, timeout: .seconds(20))
    #expect(bob.source == .revalidated)
    #expect(server.requests(path: "/s3/secret-alice.png").map { $0.header("If-None-Match") } == ["\"v1\""])
    // Alice and Bob alternate: each is confirmed once, then both hit.
    server.resetCounters()
    for url in [aliceURL, bobURL, aliceURL, bobURL] {
      #expect(try await pipeline.attachment(for: url, timeout: .seconds(20)).source == .cache)
    }
    #expect(server.requests(path: "/s3/secret-alice.png").count <= 1)
  }

  @Test("a presigned URL past its own expiry is refused without a request, cached copy or not")
  func expired() async throws {
    let (server, _) = try Self.origin()
    defer { server.stop() }
    let scratch = try ScratchDirectory("hit-confirmation-expired")
    defer { scratch.remove() }
    let pipeline = try Self.pipeline(scratch)
    _ = try await pipeline.attachment(for: Self.presigned(server, "alice"), timeout: .seconds(20))
    server.resetCounters()
    for url in [
      Self.presigned(server, "alice", expires: 60, ago: 120),
      Self.presigned(server, "new", expires: 1, ago: 5),
    ] {
      do {
        _ = try await pipeline.attachment(for: url, timeout: .seconds(20))
        Issue.record("\(url) was answered")
      } catch {
        #expect(error.code == .presignedURLExpired, "\(error)")
      }
    }
    #expect(server.requests(path: "/s3/secret-alice.png").isEmpty)
    // The expiry spellings: S3 and GCS V4, V2's and CloudFront's Expires, Azure's se.
    #expect(
      PresignedExpiry.expiry(of: "https://h/a?X-Amz-Date=20261207T000000Z&X-Amz-Expires=60") == 1_796_601_660)
    #expect(
      PresignedExpiry.expiry(of: "https://h/a?X-Goog-Date=20261207T000000Z&X-Goog-Expires=1") == 1_796_601_601
    )
    #expect(PresignedExpiry.expiry(of: "https://h/a?Expires=1796601600&Signature=x") == 1_796_601_600)
    #expect(PresignedExpiry.expiry(of: "https://h/a?se=2026-12-07T00%3A00%3A10Z&sig=x") == 1_796_601_610)
    #expect(PresignedExpiry.expiry(of: "https://h/a?w=1") == nil)
  }

  @Test("a forged URL never joins another caller's fetch under way: the shared fetch is per URL")
  func noSharedFlight() async throws {
    let (server, secret) = try Self.origin()
    defer { server.stop() }
    let scratch = try ScratchDirectory("hit-confirmation-flight")
    defer { scratch.remove() }
    let pipeline = try Self.pipeline(scratch)
    let exact = pipeline.callerKey(pipeline.keyed(try AttachmentURL(Self.presigned(server, "alice"))))
    let forged = pipeline.callerKey(pipeline.keyed(try AttachmentURL(Self.presigned(server, "forged"))))
    // One object (one cache key), two callers' keys.
    #expect(
      pipeline.keyed(try AttachmentURL(Self.presigned(server, "alice"))).key
        == pipeline.keyed(try AttachmentURL(Self.presigned(server, "forged"))).key)
    #expect(exact != forged)
    // Both at once: each gets its own answer.
    async let a = pipeline.attachment(for: Self.presigned(server, "alice"), timeout: .seconds(20))
    let forgedURL = Self.presigned(server, "forged")
    let m = Task { () -> AttachmentError? in
      do throws(AttachmentError) {
        _ = try await pipeline.attachment(for: forgedURL, timeout: .seconds(20))
        return nil
      } catch {
        return error
      }
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: try await a.path)) == Data(secret))
    #expect(await m.value?.httpStatus == 403)
  }

  @Test(
    "confirm:off-objects-are-public: the operator's explicit opt-out answers every signature from the entry, asking nothing"
  )
  func publicObjects() async throws {
    let (server, secret) = try Self.origin()
    defer { server.stop() }
    let scratch = try ScratchDirectory("hit-confirmation-public")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.cache.keyRules = try CacheKeyRules(["preset:s3", CacheKeyRules.publicObjectsRule])
    let pipeline = try AttachmentPipeline(configuration: configuration)
    _ = try await pipeline.attachment(for: Self.presigned(server, "alice"), timeout: .seconds(20))
    server.resetCounters()
    let other = try await pipeline.attachment(for: Self.presigned(server, "forged"), timeout: .seconds(20))
    #expect(other.source == .cache)
    #expect(try Data(contentsOf: URL(fileURLWithPath: other.path)) == Data(secret))
    #expect(server.requests(path: "/s3/secret-alice.png").isEmpty)
  }
}
