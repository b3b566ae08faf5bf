import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A URL checked once: the check, the cache key and the redacted text computed together, and
/// the value carried through the pipeline and the downloader.
@Suite("AttachmentURL", .threadOfItsOwn)
struct AttachmentURLTests {
  @Test("the same refusals as the downloader's own check, with the same codes")
  func refusals() {
    for (text, code) in BadURLs.cases {
      #expect(throws: AttachmentError.self, "\(text)") { try AttachmentURL(text) }
      do {
        _ = try AttachmentURL(text)
      } catch {
        #expect(error.code == code, "\(text): \(error)")
        #expect(URLCheck.problem(with: text)?.code == code, "\(text)")
      }
    }
  }

  @Test("key, redaction and text of a checked URL agree with the one-off helpers")
  func parts() throws {
    let text = "HTTPS://alice:secret@CDN.Example.com:443/p/Photo.JPG?v=2#top"
    let url = try AttachmentURL(text)
    #expect(url.text == text)
    #expect(url.redacted == "HTTPS://***@CDN.Example.com:443/p/Photo.JPG?v=2#top")
    #expect(!url.description.contains("secret"))
    #expect(url.key.normalized == "https://alice:secret@cdn.example.com/p/Photo.JPG?v=2")
    #expect(url.key == URLKey(text))
    #expect(url.redacted == Redaction.redact(text))
    #expect(try AttachmentURL("https://cdn.example.com/p/Photo.JPG?v=2").key != url.key)
  }

  @Test("the pipeline answers a checked URL, from the network and then from the cache")
  func throughThePipeline() async throws {
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("checked-url")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    let pipeline = try AttachmentPipeline(configuration: configuration)
    server.serve("/a.png", body: try Samples.bytes("png-gray.png"), contentType: "image/png")
    let url = try AttachmentURL(server.url("/a.png"))

    let first = try await pipeline.attachment(AttachmentRequest(url: url, deadline: .now + generousTimeout))
    let hit = try #require(pipeline.cachedAttachment(for: url))

    #expect(first.source == .network && hit.source == .cache && hit.path == first.path)
    #expect(pipeline.cachedAttachment(for: url.text)?.path == first.path)
    #expect(server.requestCount(path: "/a.png") == 1)
  }
}
