import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// `lookup` is the one cache lookup of a request, and `attachment(for:after:deadline:)`
/// continues from it: each case of ``Lookup`` against a real cache and server.
@Suite("The one lookup", .threadOfItsOwn)
struct LookupTests {
  @Test("miss, hit, stale and refused, each continued to the answer the plain call gives")
  func everyCase() async throws {
    // Given a JPEG that stays fresh and a GIF that is stale at once (revalidated by its ETag)
    let fixture = try PipelineFixture("lookup")
    defer { fixture.close() }
    fixture.server.serve(
      "/f.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    fixture.server.serve(
      "/s.gif", body: try Samples.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "max-age=0")], etag: "\"g1\"")
    let fresh = try AttachmentURL(fixture.server.url("/f.jpg"))
    let stale = try AttachmentURL(fixture.server.url("/s.gif"))
    let pipeline = fixture.pipeline

    // A miss is fetched
    guard case .miss = pipeline.lookup(fresh) else { throw LookupError.unexpected("a miss") }
    let fetched = try await pipeline.attachment(
      AttachmentRequest(url: fresh, deadline: .now + generousTimeout), after: .miss)
    #expect(fetched.source == .network)
    // and is then a hit, answered from the lookup alone
    guard case .hit(let hit) = pipeline.lookup(fresh) else { throw LookupError.unexpected("a hit") }
    #expect(hit.path == fetched.path && hit.source == .cache)
    let answered = try await pipeline.attachment(
      AttachmentRequest(url: fresh, deadline: .now + generousTimeout), after: .hit(hit))
    #expect(answered.path == hit.path)
    #expect(fixture.server.requestCount(path: "/f.jpg") == 1)
    // A stale copy is revalidated from the lookup: one conditional request, a 304
    _ = try await pipeline.attachment(AttachmentRequest(url: stale, deadline: .now + generousTimeout))
    let staleLookup = pipeline.lookup(stale)
    guard case .stale(let copy) = staleLookup else { throw LookupError.unexpected("a stale copy") }
    #expect(copy.validation.type == .gif)
    let revalidated = try await pipeline.attachment(
      AttachmentRequest(url: stale, deadline: .now + generousTimeout), after: staleLookup)
    #expect(revalidated.source == .revalidated)
    #expect(fixture.server.requests(path: "/s.gif").last?.header("If-None-Match") == "\"g1\"")
    // A caller whose policy refuses the stored facts is refused by its lookup, with no request
    var strict = pipeline.configuration
    strict.limits.maximumImageBytes = 100
    let refused = try AttachmentPipeline(configuration: strict).lookup(fresh)
    guard case .refused(let error) = refused else { throw LookupError.unexpected("a refusal") }
    #expect(error.code == .tooLarge)
    #expect(refused.answer.map { (try? $0.get()) == nil } == true)
    #expect(fixture.server.requestCount(path: "/f.jpg") == 1)
  }

  @Test("another URL's stale copy is never revalidated or refreshed under this URL")
  func staleCopyOfAnotherURL() async throws {
    let fixture = try PipelineFixture("lookup-other")
    defer { fixture.close() }
    let gif = try Samples.bytes("gif-static.gif")
    fixture.server.serve(
      "/a.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=0")], etag: "\"a\"")
    fixture.server.serve("/b.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg")
    let a = try AttachmentURL(fixture.server.url("/a.gif"))
    let b = try AttachmentURL(fixture.server.url("/b.jpg"))
    _ = try await fixture.pipeline.attachment(AttachmentRequest(url: a, deadline: .now + generousTimeout))
    let recordBefore = try #require(fixture.pipeline.cache.recordText(forURL: a.text))

    // When A's stale lookup is handed on with B
    let answer = try await fixture.pipeline.attachment(
      AttachmentRequest(url: b, deadline: .now + generousTimeout), after: fixture.pipeline.lookup(a))

    // Then B was fetched as itself, unconditionally, and A's record is untouched
    #expect(answer.type == .jpeg && answer.source == .network)
    #expect(fixture.server.requests(path: "/b.jpg").first?.header("If-None-Match") == nil)
    #expect(fixture.server.requestCount(path: "/a.gif") == 1)
    #expect(fixture.pipeline.cache.recordText(forURL: a.text) == recordBefore)
  }

  enum LookupError: Error { case unexpected(String) }
}
