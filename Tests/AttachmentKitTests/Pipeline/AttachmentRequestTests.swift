import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The request value end to end: its alternatives tried in order against a real loopback
/// server, its cache policy, within its one deadline.
@Suite("Pipeline: the request value")
struct AttachmentRequestTests {
  @Test(
    "alternatives are tried in order, each after the one before failed: a 404, an HTML page, then the JPEG")
  func alternativesInOrder() async throws {
    // Given a URL that is missing, an alternative that is an HTML page, and one that is a JPEG
    let fixture = try PipelineFixture("alternatives")
    defer { fixture.close() }
    fixture.server.serve(
      "/page", body: Array(try Samples.bytes("html-error-page.html")), contentType: "image/jpeg")
    fixture.server.serve(
      "/good", body: Array(try Samples.bytes("jpeg-baseline.jpg")), contentType: "image/jpeg")
    fixture.server.serve("/unused", body: Array(try Samples.bytes("png-rgba.png")), contentType: "image/png")
    var request = try AttachmentRequest(url: fixture.server.url("/missing"), timeout: generousTimeout)
    request.alternatives = try ["/page", "/good", "/unused"].map { try AttachmentURL(fixture.server.url($0)) }

    // When it is asked for
    let attachment = try await fixture.pipeline.attachment(request)

    // Then the JPEG answers, as the second alternative, with why the two before it failed
    #expect(attachment.type == .jpeg)
    #expect(attachment.alternative == 1)
    #expect(attachment.url == fixture.server.url("/good"))
    #expect(attachment.failures.map(\.code) == [.httpStatus, .unsupportedType])
    // and the server saw each source once, in order, and never the one after the answer
    let paths = fixture.server.allRequests.map(\.path)
    #expect(paths == ["/missing", "/page", "/good"])
    // and a second request is answered from the cache by the same alternative
    let again = try await fixture.pipeline.attachment(request)
    #expect(again.source == .cache && again.alternative == 1 && again.sha256 == attachment.sha256)
  }

  @Test("when every source fails, the URL's own error is the answer, naming how each alternative failed")
  func everySourceFails() async throws {
    let fixture = try PipelineFixture("alternatives")
    defer { fixture.close() }
    fixture.server.serve("/page", body: Array(try Samples.bytes("html-error-page.html")))
    var request = try AttachmentRequest(url: fixture.server.url("/missing"), timeout: generousTimeout)
    request.alternatives = [
      try AttachmentURL(fixture.server.url("/page")), try AttachmentURL("http://127.0.0.1:1/x"),
    ]

    let error = await #expect(throws: AttachmentError.self) { try await fixture.pipeline.attachment(request) }

    #expect(error?.code == .httpStatus)
    #expect(error?.httpStatus == 404)
    #expect(
      error?.message.hasSuffix("Alternatives failed too (1: unsupported_type, 2: connect_failed).") == true,
      "\(error?.message ?? "")")
  }

  @Test("a hanging alternative never takes the request past its deadline, and none is tried after it")
  func hangingAlternative() async throws {
    // Given a missing URL whose alternative never answers, and a 2 s deadline
    let fixture = try PipelineFixture("alternatives")
    defer { fixture.close() }
    // The engine started first, so that the deadline is spent on the sources.
    _ = try? await fixture.pipeline.attachment(for: fixture.server.url("/missing"), timeout: generousTimeout)
    let deadline = ContinuousClock.now + .seconds(3)
    var request = AttachmentRequest(
      url: try AttachmentURL(fixture.server.url("/missing")), deadline: deadline)
    request.alternatives = [
      try AttachmentURL(fixture.server.url("/fault/never")),
      try AttachmentURL(fixture.server.url("/never-asked")),
    ]

    // When it is asked for
    let error = await #expect(throws: AttachmentError.self) { try await fixture.pipeline.attachment(request) }

    // Then the deadline is the answer, by the deadline, and the last alternative was not tried
    #expect(error?.code == .deadlineExceeded)
    #expect(ContinuousClock.now - deadline < deadlineMargin)
    #expect(fixture.server.requestCount(path: "/never-asked") == 0)
    // (A loaded machine may spend the 3 s before the hanging one is reached: at most once.)
    #expect(fixture.server.requestCount(path: "/fault/never") <= 1)
  }

  @Test("a reload skips the cache and refreshes it; the default answers from it")
  func cachePolicy() async throws {
    let fixture = try PipelineFixture("alternatives")
    defer { fixture.close() }
    fixture.server.serve(
      "/a.png", body: Array(try Samples.bytes("png-rgba.png")), contentType: "image/png",
      headers: [("Cache-Control", "max-age=600")])
    let url = try AttachmentURL(fixture.server.url("/a.png"))

    let first = try await fixture.pipeline.attachment(
      AttachmentRequest(url: url, deadline: .now + generousTimeout))
    let hit = try await fixture.pipeline.attachment(
      AttachmentRequest(url: url, deadline: .now + generousTimeout))
    let reloaded = try await fixture.pipeline.attachment(
      AttachmentRequest(url: url, deadline: .now + generousTimeout, cachePolicy: .reload))

    #expect([first.source, hit.source, reloaded.source] == [.network, .cache, .network])
    #expect(fixture.server.requestCount(path: "/a.png") == 2)
    guard
      case .miss = fixture.pipeline.lookup(AttachmentRequest(url: url, deadline: .now, cachePolicy: .reload))
    else {
      Issue.record("a reload's lookup is a miss")
      return
    }
  }

  @Test("thumbnail options are checked against the file that answers: kept, or dropped with a reason")
  func thumbnailOptions() async throws {
    let fixture = try PipelineFixture("alternatives")
    defer { fixture.close() }
    fixture.server.serve("/a.png", body: Array(try Samples.bytes("png-rgba.png")), contentType: "image/png")
    fixture.server.serve("/v.mp4", body: Array(try Samples.bytes("mp4-avc1.mp4")), contentType: "video/mp4")
    let wide = ThumbnailOptions.ClippingRect(x: 0.5, y: 0, width: 0.6, height: 1)
    let half = ThumbnailOptions.ClippingRect(x: 0, y: 0, width: 0.5, height: 0.5)

    // An image given a time and a rectangle past its right edge, and a hidden thumbnail
    var image = try AttachmentRequest(url: fixture.server.url("/a.png"), timeout: generousTimeout)
    image.thumbnail = ThumbnailOptions(clippingRect: wide, time: 1, hidden: true)
    let still = try await fixture.pipeline.attachment(image)
    // A video given a time within it, then one past its end
    var video = try AttachmentRequest(url: fixture.server.url("/v.mp4"), timeout: generousTimeout)
    video.thumbnail = ThumbnailOptions(clippingRect: half, time: 0.5)
    let movie = try await fixture.pipeline.attachment(video)
    video.thumbnail = ThumbnailOptions(time: 9_999)
    let late = try await fixture.pipeline.attachment(video)

    #expect(still.thumbnail == ThumbnailOptions(hidden: true))
    #expect(
      still.thumbnailProblems == [
        "crop reaches past the right edge (x + width = 1.1 > 1): thumbnailClippingRect dropped",
        "time 1 s on an image (public.png), not a video: thumbnailTime dropped",
      ])
    #expect(movie.thumbnail == ThumbnailOptions(clippingRect: half, time: 0.5))
    #expect(movie.thumbnailProblems.isEmpty)
    #expect(late.thumbnail.time == nil && late.thumbnail.timeIsProposed == false)
    #expect(late.thumbnailProblems.first?.hasPrefix("time 9999 s is past the video's duration of") == true)
  }
}
