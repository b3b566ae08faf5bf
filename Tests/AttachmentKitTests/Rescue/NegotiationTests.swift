import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// `Accept` negotiation against a real server that picks the format from the header, as image
/// CDNs do: a JPEG when `Accept` names `image/jpeg` and not `image/webp`, WebP otherwise.
@Suite("Rescue: Accept negotiation", .threadOfItsOwn)
struct NegotiationTests {
  /// Serves the JPEG sample or the WebP sample at `path`, chosen from the request's `Accept`.
  static func negotiate(_ server: TestHTTPServer, path: String) throws {
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    let webp = try Samples.bytes("webp-lossy.webp")
    server.route(path) { request, writer in
      let accept = request.header("Accept") ?? ""
      let wantsJPEG = accept.contains("image/jpeg") && !accept.contains("image/webp")
      let (body, type) = wantsJPEG ? (jpeg, "image/jpeg") : (webp, "image/webp")
      _ = writer.respond(
        status: 200,
        headers: [("Content-Type", type), ("Vary", "Accept"), ("Content-Length", "\(body.count)")],
        body: body)
    }
  }

  @Test("the default Accept names every accepted type and */*;q=0.1, never WebP or AVIF")
  func defaultHeader() async throws {
    // Given a server that records requests
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let scratch = try ScratchDirectory("accept")
    defer { scratch.remove() }

    // When a file is downloaded with the default configuration
    let download = try await Downloader(configuration: .loopback).download(
      DownloadRequest(url: server.url("/a"), directory: scratch.path), timeout: generousTimeout)
    if let file = download.file { unlink(file) }

    // Then the request's Accept lists each accepted MIME type and the low-weight wildcard
    let accept = try #require(server.requests(path: "/a").first?.header("Accept"))
    #expect(accept == DownloaderConfiguration.defaultAccept)
    for type in MediaType.allCases { #expect(accept.contains(type.mime)) }
    #expect(accept.hasSuffix("*/*;q=0.1"))
    #expect(!accept.contains("webp"))
    #expect(!accept.contains("avif"))
  }

  @Test("a negotiating server yields a JPEG without rescue; with Accept */* it would send WebP")
  func negotiatingServer() async throws {
    // Given a negotiating server and two pipelines without rescue: the default Accept, and one
    // that accepts anything (as a browser does)
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    try Self.negotiate(server, path: "/cdn/photo")
    let scratch = try ScratchDirectory("negotiate")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/a")
    configuration.downloader.allowPrivateNetworks = true
    let negotiating = try AttachmentPipeline(configuration: configuration)
    configuration.cache = CacheConfiguration(directory: scratch.path + "/b")
    configuration.downloader.accept = "*/*"
    let anything = try AttachmentPipeline(configuration: configuration)

    // When each asks for the same URL
    let attachment = try await negotiating.attachment(for: server.url("/cdn/photo"), timeout: generousTimeout)
    let refusal = await #expect(throws: AttachmentError.self) {
      try await anything.attachment(for: server.url("/cdn/photo"), timeout: generousTimeout)
    }

    // Then the default got a JPEG that needed no conversion, and */* got WebP, refused
    #expect(attachment.type == .jpeg)
    #expect(refusal?.code == .unsupportedType)
    #expect(refusal?.detected == "image/webp")
  }

  @Test("an empty Accept setting sends no Accept header at all")
  func emptyHeader() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serve("/a", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let scratch = try ScratchDirectory("accept-empty")
    defer { scratch.remove() }
    var configuration = DownloaderConfiguration.loopback
    configuration.accept = ""

    let download = try await Downloader(configuration: configuration).download(
      DownloadRequest(url: server.url("/a"), directory: scratch.path), timeout: generousTimeout)
    if let file = download.file { unlink(file) }

    #expect(server.requests(path: "/a").first?.hasHeader("Accept") == false)
  }
}
