import ExtensionRunnerCore
import Foundation
import TestSupport
import TestTraits
import Testing

/// The payload's `fallback-urls` and `fallback-body`, and the runner's `--fallback-image`.
@Suite("Fallbacks: alternative URLs, alternative text, the bundled image", .serialized, .threadOfItsOwn)
struct FallbackRunnerTests {
  /// The bundled image the tests use.
  static let imageName = "png-rgba.png"

  /// The trace step named `name`, or a failed requirement.
  static func step(_ trace: [RunnerJSON.Step], _ name: String) throws -> RunnerJSON.Step {
    try #require(trace.first { $0.name == name }, "no step \(name): \(trace.map(\.name))")
  }

  @Test(
    "alternatives are tried in order, each after the one before failed: a 404, a refused page, then the good one"
  )
  func alternativesInOrder() async throws {
    // Given a payload whose image is missing, with three alternatives: an HTML page, a PNG, a GIF
    let fixture = try RunnerFixture("fallback-order")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"alert": {"title": "T", "body": "Original body"}, "mutable-content": 1},
       "image-url": "{BASE}/media/missing.png",
       "fallback-urls": ["{BASE}/media/html-error-page.html", "{BASE}/media/png-rgba.png",
                         "{BASE}/media/gif-static.gif"],
       "fallback-body": "Open the app to see the picture."}
      """)

    // When the runner runs it, with a bundled image too
    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--trace", "--fallback-image", Repository.media(Self.imageName), payload])

    // Then the PNG alternative is delivered, marked as such, and the body stays
    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.attachments.count == 1)
    let attachment = try #require(output.attachments.first)
    #expect(attachment.identifier == "attachment-1")
    #expect(attachment.source == "fallback-urls[1]")
    #expect(attachment.typeHint == "public.png")
    #expect(fileBytes(attachment.path) == fileBytes(Repository.media(Self.imageName)))
    #expect(output.body == "Original body")
    // each source after the one before ended, the last never asked for
    let trace = try #require(output.trace)
    let primary = try Self.step(trace, "attachment attachment-1")
    let first = try Self.step(trace, "attachment attachment-1 fallback-urls[0]")
    let second = try Self.step(trace, "attachment attachment-1 fallback-urls[1]")
    #expect(primary.outcome == "failed")
    #expect(primary.detail.hasPrefix("http_status"))
    #expect(first.outcome == "failed")
    #expect(first.detail.hasPrefix("unsupported_type"))
    #expect(second.outcome == "ok")
    #expect(second.detail.contains("from fallback-urls[1]"))
    #expect(first.startMs >= (primary.endMs ?? .infinity))
    #expect(second.startMs >= (first.endMs ?? .infinity))
    #expect(!trace.contains { $0.name.contains("fallback-urls[2]") })
    #expect(!trace.contains { $0.name == "fallback image" || $0.name == "fallback body" })
    #expect(fixture.server.requestCount(path: "/media/missing.png") == 1)
    #expect(fixture.server.requestCount(path: "/media/html-error-page.html") == 1)
    #expect(fixture.server.requestCount(path: "/media/png-rgba.png") == 1)
    #expect(fixture.server.requestCount(path: "/media/gif-static.gif") == 0)
    // and the unused fallback image left no file behind
    let directory = URL(fileURLWithPath: attachment.path).deletingLastPathComponent().path
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["1-attachment-1.png"])
  }

  @Test("of 12 fallback-urls the first 10 are kept, in order, and the cap is noted")
  func cappedToTheFirstTen() {
    let urls = (0..<12).map { "https://cdn.example.com/alt-\($0).png" }
    let fallbacks = PayloadFallbacks(userInfo: [PayloadFallbacks.urlsKey: .array(urls.map { .string($0) })])
    #expect(PayloadFallbacks.maximumURLs == 10)
    #expect(fallbacks.urls == Array(urls.prefix(10)))
    #expect(fallbacks.problems == ["fallback-urls has 12 URLs: only the first 10 are tried"])
  }

  @Test("every source fails: the bundled image and fallback-body are delivered once all are done")
  func allFail() async throws {
    let fixture = try RunnerFixture("fallback-all")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"alert": {"title": "T", "body": "Original body"}, "mutable-content": 1},
       "image-url": "{BASE}/media/missing.png",
       "fallback-urls": ["{BASE}/status/500", "{BASE}/media/html-error-page.html"],
       "fallback-body": "Open the app to see the picture."}
      """)

    let run = await fixture.runInProcess(
      fixture.commonArguments + [
        "--trace", "--budget", "20", "--fallback-image", Repository.media(Self.imageName), payload,
      ])

    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    let attachment = try #require(output.attachments.first)
    #expect(output.attachments.count == 1)
    #expect(attachment.identifier == "fallback-image")
    #expect(attachment.source == "fallback-image")
    #expect(attachment.typeHint == "public.png")
    #expect(fileBytes(attachment.path) == fileBytes(Repository.media(Self.imageName)))
    #expect(output.body == "Open the app to see the picture.")
    let trace = try #require(output.trace)
    #expect(try Self.step(trace, "attachment attachment-1 fallback-urls[0]").detail.hasPrefix("http_status"))
    #expect(try Self.step(trace, "attachment attachment-1 fallback-urls[1]").outcome == "failed")
    #expect(try Self.step(trace, "fallback image").outcome == "ok")
    #expect(try Self.step(trace, "fallback body").outcome == "ok")
    let deliver = try Self.step(trace, "deliver")
    #expect(deliver.detail.hasPrefix("all steps done"))
    // long before the budget's end
    #expect(deliver.startMs < 20_000)
  }

  @Test(
    "a hanging alternative: the bundled image is delivered at time-will-expire, within the budget, the rest untried"
  )
  func hangingAlternative() async throws {
    // Given a missing image whose first alternative never answers and whose second is good
    let fixture = try RunnerFixture("fallback-hang")
    defer { fixture.close() }
    let payload = try fixture.write(
      "p.json",
      """
      {"aps": {"alert": {"title": "T", "body": "Original body"}, "mutable-content": 1},
       "image-url": "{BASE}/media/missing.png",
       "fallback-urls": ["{BASE}/fault/never", "{BASE}/media/png-rgba.png"],
       "fallback-body": "Open the app to see the picture."}
      """)

    // When the binary runs it with a 6 s budget and a 2.5 s margin
    let run = try await fixture.runBinary(
      fixture.commonArguments + [
        "--budget", "6", "--expire-margin", "2.5", "--trace", "--fallback-image",
        Repository.media(Self.imageName), payload,
      ])

    // Then the content reached stdout within the budget, delivered at time-will-expire with the
    // bundled image and the fallback text
    #expect(run.status == 0)
    let delivered = try #require(run.delivered)
    #expect(delivered < .seconds(6) + deadlineMargin, "delivered after \(run.deliveredMilliseconds) ms")
    let output = try run.output()
    #expect(output.attachments.map(\.source) == ["fallback-image"])
    #expect(output.body == "Open the app to see the picture.")
    let trace = try #require(output.trace)
    let deliver = try #require(trace.last { $0.name == "deliver" })
    #expect(deliver.detail.hasPrefix("time will expire"))
    #expect(BudgetTests.atTimeWillExpire(deliver.startMs, 3500), "delivered at \(deliver.startMs) ms")
    // the hanging alternative was cancelled and the next never tried
    #expect(try Self.step(trace, "attachment attachment-1 fallback-urls[0]").outcome == "cancelled")
    #expect(fixture.server.requestCount(path: "/fault/never") == 1)
    #expect(fixture.server.requestCount(path: "/media/png-rgba.png") == 0)
  }

  @Test("fallback-body and the bundled image only when no attachment at all was made")
  func onlyWhenNone() async throws {
    let fixture = try RunnerFixture("fallback-some")
    defer { fixture.close() }
    // One of two attachments is made: the body stays, no bundled image.
    let some = try fixture.write(
      "some.json",
      """
      {"aps": {"alert": {"body": "Original body"}, "mutable-content": 1},
       "attachments": [{"url": "{BASE}/media/missing.png", "id": "gone"},
                       {"url": "{BASE}/media/gif-static.gif", "id": "here"}],
       "fallback-body": "Fallback body"}
      """)
    // No attachment asked for: nothing failed, the body stays.
    let none = try fixture.write(
      "none.json",
      """
      {"aps": {"alert": {"body": "Original body"}, "mutable-content": 1}, "fallback-body": "Fallback body"}
      """)
    let image = ["--fallback-image", Repository.media(Self.imageName)]

    let withSome = try await fixture.runInProcess(fixture.commonArguments + image + [some]).output()
    #expect(withSome.body == "Original body")
    #expect(withSome.attachments.map(\.identifier) == ["here"])
    #expect(withSome.attachments.map(\.source) == [nil])

    let withNone = try await fixture.runInProcess(fixture.commonArguments + image + [none]).output()
    #expect(withNone.body == "Original body")
    #expect(withNone.attachments.isEmpty)
  }

  @Test(
    "Samples/payloads/fallback.json through the binary: the JPEG from fallback-urls[1], the original body")
  func samplePayload() async throws {
    let fixture = try RunnerFixture("fallback-sample")
    defer { fixture.close() }

    let run = try await fixture.runBinary(
      fixture.commonArguments + ["--trace", Repository.payload("fallback.json")])

    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.attachments.map(\.source) == ["fallback-urls[1]"])
    #expect(output.attachments.map(\.typeHint) == ["public.jpeg"])
    #expect(output.body == "40% off the spring collection until midnight.")
    #expect(run.standardError.contains("from fallback-urls[1]"), "\(run.standardError)")
  }

  @Test("a bundled file that is no acceptable image is a usage error at start, naming why")
  func badImage() async throws {
    let fixture = try RunnerFixture("fallback-bad")
    defer { fixture.close() }
    for (file, says) in [
      (Repository.media("html-error-page.html"), "unsupported_type"),
      (Repository.media("mp4-avc1.mp4"), "must be an image"),
      (fixture.scratch + "/missing.png", "io_error"),
    ] {
      let run = await fixture.runInProcess(
        fixture.commonArguments + ["--fallback-image", file, Repository.payload("image.json")])
      #expect(run.status == 2, "\(file): \(run.standardError)")
      #expect(run.standardError.contains("--fallback-image"), "\(run.standardError)")
      #expect(run.standardError.contains(says), "\(run.standardError)")
      #expect(run.standardOutput.isEmpty)
    }
    #expect(fixture.requestsReceived == 0)
  }
}
