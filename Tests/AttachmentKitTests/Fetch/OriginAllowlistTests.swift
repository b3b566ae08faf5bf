import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The source allowlist (issue #37, item 4): hosts, wildcards and URL prefixes, checked for the
/// URL and for every redirect, with and without the private-network guard.
@Suite("Origin allowlist", .threadOfItsOwn)
struct OriginAllowlistTests {
  @Test("hosts, *. wildcards and URL prefixes, matched at segment boundaries and never through dot segments")
  func matching() throws {
    let list = try OriginAllowlist([
      "media.example.com", "*.cdn.example.net", "https://assets.example.org/push/", "http://[::1]:8080/a",
    ])
    let allowed = [
      "https://media.example.com/x.jpg", "http://MEDIA.example.com:8443/y", "https://a.cdn.example.net/z",
      "https://a.b.cdn.example.net/z", "https://assets.example.org/push/1.jpg",
      "https://assets.example.org:443/push/1.jpg?v=2", "http://[::1]:8080/a", "http://[::1]:8080/a/b",
    ]
    let refused = [
      "https://media.example.com.evil.com/x", "https://evil.com/media.example.com",
      "https://cdn.example.net/z",
      "https://xcdn.example.net/z", "http://assets.example.org/push/1.jpg",
      "https://assets.example.org:8443/push/1.jpg", "https://assets.example.org/pushover",
      "https://assets.example.org/push/../private/1.jpg", "https://assets.example.org/push/%2E%2e/private",
      "https://media.example.com@evil.com/x.jpg", "https://%6dedia.example.com/x",
      "https://evil.com%2f.cdn.example.net/", "http://[::1]:8080/ab", "http://[::1]/a",
    ]
    for url in allowed { #expect(list.allows(url), "\(url)") }
    for url in refused { #expect(!list.allows(url), "\(url)") }
    #expect(OriginAllowlist.any.allows("https://anything.example/"))
  }

  @Test(
    "entries that are no host, wildcard or http(s) prefix are refused",
    arguments: [
      "", "*", "*.", "a*.example.com", "ftp://example.com/", "https://", "https://example.com/?q",
      "example.com/path",
    ])
  func badEntries(_ entry: String) {
    #expect(throws: AttachmentError.self) { try OriginAllowlist([entry]) }
  }

  @Test("a URL outside the list fails origin_not_allowed with no connection; a redirect out of it too")
  func urlAndRedirects() async throws {
    let allowed = try TestHTTPServer.start()
    defer { allowed.stop() }
    let other = try TestHTTPServer.start()
    defer { other.stop() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    allowed.serve("/push/ok.jpg", body: jpeg, contentType: "image/jpeg")
    other.serve("/x.jpg", body: jpeg, contentType: "image/jpeg")
    allowed.route("/push/away") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", other.url("/x.jpg"))])
    }
    allowed.route("/push/up") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", "../secret.jpg")])
    }
    allowed.route("/push/in") { _, writer in
      _ = writer.respond(status: 301, headers: [("Location", "ok.jpg")])
    }
    allowed.serve("/secret.jpg", body: jpeg, contentType: "image/jpeg")
    let scratch = try ScratchDirectory("allowlist")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.downloader.allowedOrigins = try OriginAllowlist([allowed.url("/push/")])
    let pipeline = try AttachmentPipeline(configuration: configuration)

    // Inside the prefix, and a relative redirect that stays inside it: delivered
    #expect(
      try await pipeline.attachment(for: allowed.url("/push/ok.jpg"), timeout: .seconds(20)).source
        == .network)
    #expect(
      try await pipeline.attachment(for: allowed.url("/push/in"), timeout: .seconds(20)).validation.type
        == .jpeg)
    // Another origin: refused before any connection
    await #expect(throws: AttachmentError.self) {
      try await pipeline.attachment(for: other.url("/x.jpg"), timeout: .seconds(20))
    }
    #expect(other.totalConnections == 0)
    // The downloader itself refuses it (not only the pipeline's lookup), leaving no file
    var downloading = DownloaderConfiguration.loopback
    downloading.allowedOrigins = configuration.downloader.allowedOrigins
    do {
      _ = try await Downloader(configuration: downloading).download(
        DownloadRequest(url: other.url("/x.jpg"), directory: scratch.path), timeout: .seconds(20))
      Issue.record("the downloader fetched another origin")
    } catch {
      #expect(error.code == .originNotAllowed)
    }
    #expect(other.totalConnections == 0)
    #expect(
      (try FileManager.default.contentsOfDirectory(atPath: scratch.path)).filter { $0 != "cache" }.isEmpty)
    // Redirects out of it, absolute and relative: refused before they are followed
    for path in ["/push/away", "/push/up"] {
      do {
        _ = try await pipeline.attachment(for: allowed.url(path), timeout: .seconds(20))
        Issue.record("\(path) was delivered")
      } catch {
        #expect(error.code == .originNotAllowed, "\(path): \(error)")
        #expect(error.message.contains("redirect"), "\(error.message)")
      }
    }
    #expect(other.totalConnections == 0)
    #expect(allowed.requestCount(path: "/secret.jpg") == 0)
  }

  @Test("a copy cached while the list allowed its URL is refused, not served, once the list no longer does")
  func cachedCopyJudgedByTheListNow() async throws {
    // Given a fresh copy cached by a pipeline whose list allowed its prefix
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve(
      "/push/a.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    let scratch = try ScratchDirectory("allowlist-cached")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.downloader.allowedOrigins = try OriginAllowlist([server.url("/push/")])
    let url = server.url("/push/a.jpg")
    #expect(
      try await AttachmentPipeline(configuration: configuration).attachment(
        for: url, timeout: generousTimeout
      ).source == .network)

    // When pipelines over the same cache ask for it with lists that no longer allow it: another
    // host, and another prefix of the same host
    for entries in [["media.example.com"], [server.url("/other/")]] {
      configuration.downloader.allowedOrigins = try OriginAllowlist(entries)
      let pipeline = try AttachmentPipeline(configuration: configuration)

      // Then the lookup and the request are refused with origin_not_allowed, the copy unserved
      guard
        case .refused(let refusal) = pipeline.lookup(
          try AttachmentRequest(url: url, timeout: generousTimeout))
      else {
        Issue.record("\(entries): the cached copy was not refused")
        continue
      }
      #expect(refusal.code == .originNotAllowed, "\(entries)")
      let error = await #expect(throws: AttachmentError.self) {
        try await pipeline.attachment(for: url, timeout: generousTimeout)
      }
      #expect(error?.code == .originNotAllowed, "\(entries)")
    }
    // and the origin was asked once; the list that allows it is still answered from the cache
    #expect(server.requestCount(path: "/push/a.jpg") == 1)
    configuration.downloader.allowedOrigins = try OriginAllowlist([server.url("/push/")])
    #expect(
      try await AttachmentPipeline(configuration: configuration).attachment(
        for: url, timeout: generousTimeout
      ).source == .cache)
  }

  @Test("with the private-network guard on, the two refusals are independent")
  func withGuard() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/g.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let scratch = try ScratchDirectory("allowlist-guard")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowedOrigins = try OriginAllowlist(["media.example.com"])
    let pipeline = try AttachmentPipeline(configuration: configuration)
    // Outside the list: origin_not_allowed, before the address is looked at
    await #expect(throws: AttachmentError.self) {
      try await pipeline.attachment(for: server.url("/g.jpg"), timeout: .seconds(20))
    }
    do {
      _ = try await pipeline.attachment(for: server.url("/g.jpg"), timeout: .seconds(20))
    } catch {
      #expect(error.code == .originNotAllowed)
    }
    // On the list, but loopback: the guard still refuses
    configuration.downloader.allowedOrigins = try OriginAllowlist(["127.0.0.1"])
    do {
      _ = try await AttachmentPipeline(configuration: configuration).attachment(
        for: server.url("/g.jpg"), timeout: .seconds(20))
      Issue.record("loopback was fetched with the guard on")
    } catch {
      #expect(error.code == .blockedAddress)
    }
    #expect(server.totalRequests == 0)
  }
}
