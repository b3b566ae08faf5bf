import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A rescuer added to ``PipelineConfiguration/rescuers`` from outside the library, with no
/// change to the pipeline, the hit policy or the cache record: it is asked after the image
/// rescuer, its output is validated, its provenance is stored under its name, and a caller
/// without it is refused from the record as the original would be.
@Suite("Rescue: the seam", .rescueTurn, .threadOfItsOwn)
struct RescuerSeamTests {
  /// Delivers a campaign's fallback picture when the server answers with an HTML page (an
  /// error or login page served in the media's place): a real rescuer a product might add.
  struct FallbackPictureRescuer: Rescuer {
    let picture: String
    let maximumSourceBytes: Int64
    /// The formats (MIME types) whose refusal it undoes.
    var formats: Set<String> = ["text/html"]
    var name: String { "fallback" }

    func canRescue(_ refusal: Refusal) -> Bool {
      refusal.reason == .unsupportedFormat && refusal.format.map(formats.contains) == true
    }

    func rescue(_ job: RescueJob) throws(AttachmentError) -> Rescue {
      // The output is the pipeline's body file (an anonymous file, by its /proc path): written
      // in place, never replaced by a rename.
      guard let bytes = FileManager.default.contents(atPath: picture),
        let output = FileHandle(forWritingAtPath: job.output), (try? output.write(contentsOf: bytes)) != nil,
        (try? output.close()) != nil
      else { throw AttachmentError(.ioError, "The fallback picture cannot be written.") }
      return Rescue(
        rescuer: name, from: job.refusal.format ?? "text/html",
        actions: [Rescue.Action(rawValue: "replaced")],
        originalBytes: job.bytes)
    }

    func sourceRefusal(of provenance: Rescue) -> AttachmentError? {
      provenance.originalBytes > maximumSourceBytes
        ? AttachmentError(.tooLarge, "The page is over the fallback's source limit.") : nil
    }
  }

  static func fallback(limit: Int64 = 1_000_000, formats: Set<String> = ["text/html"])
    -> FallbackPictureRescuer
  {
    FallbackPictureRescuer(
      picture: Samples.path("jpeg-baseline.jpg"), maximumSourceBytes: limit, formats: formats)
  }

  @Test(
    "the first rescuer that fails hands the same source to the next; the first failure is the answer when all fail"
  )
  func fallbackAfterAFailedRescue() async throws {
    // Given a WebP cut short (libvips reads its header, not its pixels), and pipelines with the
    // image rescuer first and, in one, a fallback that also takes WebP
    let fixture = try PipelineFixture("seam-fallback") {
      $0.rescue = RescueConfiguration()
      $0.rescuers.append(Self.fallback(formats: ["image/webp"]))
    }
    defer { fixture.close() }
    let cut = Array(try Samples.bytes("webp-lossy.webp").prefix(200))
    fixture.server.serve("/cut.webp", body: cut, contentType: "image/webp")
    let url = fixture.server.url("/cut.webp")
    var alone = fixture.pipeline.configuration
    alone.rescuers = alone.rescuers.filter { $0.name == "image" }
    alone.cache.directory += "-alone"
    let imageOnly = try AttachmentPipeline(configuration: alone)

    // When each fetches it
    let delivered = try await fixture.pipeline.attachment(for: url, timeout: .seconds(20))
    let refused = await #expect(throws: AttachmentError.self) {
      try await imageOnly.attachment(for: url, timeout: .seconds(20))
    }

    // Then the fallback delivered after the image rescuer failed on the same source, and
    // without the fallback the answer is the image rescuer's failure
    #expect(delivered.validation.rescued?.rescuer == "fallback")
    #expect(delivered.validation.rescued?.from == "image/webp")
    #expect(refused?.code == .unsupportedType)
    #expect(refused?.message.contains("Not rescued: libvips") == true, "\(String(describing: refused))")
    #expect(fixture.openTemporaryFiles().isEmpty)
  }

  @Test("a local file (attachkit rescue) gets the same choice and fallback as a miss")
  func localFallback() async throws {
    // Given the cut WebP as a local file
    let scratch = try ScratchDirectory("seam-local")
    defer { scratch.remove() }
    let source = scratch.path + "/cut.webp"
    try writeTestFile(Data(try Samples.bytes("webp-lossy.webp").prefix(200)), to: source)
    let output = scratch.path + "/out"
    let both: [any Rescuer] = [ImageRescuer(), Self.fallback(formats: ["image/webp"])]
    let imageOnly: [any Rescuer] = [ImageRescuer()]

    // When each list rescues it
    let delivered = try await onOwnThread { () throws(AttachmentError) in
      try both.attachment(
        fromFile: source, rescuingInto: output, limits: ValidationLimits(), deadline: .now + .seconds(20))
    }
    let refused = await onOwnThread {
      Result { () throws(AttachmentError) in
        try imageOnly.attachment(
          fromFile: source, rescuingInto: output, limits: ValidationLimits(), deadline: .now + .seconds(20))
      }
    }

    // Then the fallback delivered after the image rescuer failed, and alone the image
    // rescuer's failure is the answer, with nothing left at the output
    #expect(delivered.rescued?.rescuer == "fallback")
    guard case .failure(let error) = refused else {
      Issue.record("the cut WebP was rescued by libvips")
      return
    }
    #expect(error.message.contains("Not rescued: libvips"), "\(error)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  @Test("a second rescuer plugs in: delivered, validated, stored under its name, hit again")
  func secondRescuer() async throws {
    // Given an HTML page served where a picture should be, and a pipeline with the image
    // rescuer and the fallback rescuer after it
    let fixture = try PipelineFixture("seam") {
      $0.rescue = RescueConfiguration()
      $0.rescuers.append(Self.fallback())
    }
    defer { fixture.close() }
    let page = try Samples.bytes("html-error-page.html")
    fixture.server.serve("/promo.jpg", body: page, contentType: "image/jpeg")
    let url = fixture.server.url("/promo.jpg")

    // When it is fetched twice
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then the fallback picture was delivered as a checked JPEG, with the rescuer's provenance,
    #expect(first.type == .jpeg)
    #expect(first.sha256 == (try Validator().validate(file: Samples.path("jpeg-baseline.jpg"))).sha256)
    let rescued = try #require(first.validation.rescued)
    #expect(rescued.rescuer == "fallback")
    #expect(rescued.from == "text/html")
    #expect(rescued.actions.map(\.rawValue) == ["replaced"])
    #expect(rescued.originalBytes == Int64(page.count))
    #expect(rescued.originalWidth == nil && rescued.originalDurationSeconds == nil)
    // and the second call is a hit on the stored provenance, with no second request
    #expect(again.source == .cache)
    #expect(again.validation.rescued == rescued)
    #expect(fixture.server.requestCount(path: "/promo.jpg") == 1)
    #expect(fixture.openTemporaryFiles().isEmpty)
  }

  @Test("callers without the rescuer, or under its lower source limit, are refused from the record")
  func sharedCacheObeysEachCaller() async throws {
    // Given the fallback's derivative in a cache shared with two other callers
    let fixture = try PipelineFixture("seam-shared") { $0.rescuers = [Self.fallback()] }
    defer { fixture.close() }
    fixture.server.serve(
      "/promo.jpg", body: try Samples.bytes("html-error-page.html"), contentType: "text/html")
    let url = fixture.server.url("/promo.jpg")
    _ = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    func caller(_ rescuers: [any Rescuer]) throws -> AttachmentPipeline {
      var configuration = fixture.pipeline.configuration
      configuration.rescuers = rescuers
      return try AttachmentPipeline(configuration: configuration)
    }

    // When a caller without it, and one whose fallback takes only tiny pages, ask for it
    let without = await #expect(throws: AttachmentError.self) {
      try await caller([ImageRescuer()]).attachment(for: url, timeout: generousTimeout)
    }
    let tooSmall = await #expect(throws: AttachmentError.self) {
      try await caller([Self.fallback(limit: 10)]).attachment(for: url, timeout: generousTimeout)
    }

    // Then each got the refusal its own policy gives, from the record, with no request
    #expect(without?.code == .unsupportedType)
    #expect(without?.detected == "text/html")
    #expect(tooSmall?.code == .tooLarge)
    #expect(fixture.server.requestCount(path: "/promo.jpg") == 1)
  }

  @Test("a page over the rescuer's source limit stops the transfer; without a rescuer it stops at once")
  func sourceLimitIsTheRescuers() async throws {
    let fixture = try PipelineFixture("seam-limit") { $0.rescuers = [Self.fallback(limit: 100_000)] }
    defer { fixture.close() }
    let page =
      Array("<!DOCTYPE html><html><body>".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 400_000)
    fixture.server.serve("/big.jpg", body: page, contentType: "image/jpeg")

    let error = await #expect(throws: AttachmentError.self) {
      try await fixture.pipeline.attachment(for: fixture.server.url("/big.jpg"), timeout: generousTimeout)
    }

    #expect(error?.code == .tooLarge)
    #expect(error?.message.contains("source limit of 100000") == true)
    #expect(await fixture.settledTemporaryFiles().isEmpty)
  }
}
