import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// One identification of the first bytes per miss: the streaming sniffer identifies them, and
/// the validator, the rescue decision and the record continue from its verdict.
@Suite("One identification per miss", .rescueTurn, .threadOfItsOwn)
struct IdentificationCountTests {
  @Test(
    "an accepted, a refused and a rescued miss each identify their first bytes once",
    arguments: [
      ("png-rgba.png", "image/png", true), ("mp4-avc1.mp4", "video/mp4", true),
      ("mp3-id3v2-cover.mp3", "audio/mpeg", true), ("html-error-page.html", "text/html", false),
      ("webp-lossy.webp", "image/webp", true),
    ])
  func oncePerMiss(file: String, contentType: String, delivered: Bool) async throws {
    // Given a pipeline with the image rescuer, and one sample served
    let fixture = try PipelineFixture("identify-once") { $0.rescue = RescueConfiguration() }
    defer { fixture.close() }
    fixture.server.serve("/f", body: try Samples.bytes(file), contentType: contentType)
    let url = fixture.server.url("/f")

    // When it is fetched once (a miss)
    let outcome = await Result(catching: {
      try await fixture.pipeline.attachment(for: url, deadline: .now + .seconds(10))
    })

    // Then its first bytes were identified exactly once, whatever the outcome
    #expect(((try? outcome.get()) != nil) == delivered, "\(file): \(outcome)")
    #expect(fixture.pipeline.identifications.value == 1, "\(file)")
    // and a hit identifies nothing
    if delivered {
      _ = try await fixture.pipeline.attachment(for: url, deadline: .now + .seconds(10))
      #expect(fixture.pipeline.identifications.value == 1, "\(file)")
    }
  }
}

extension Result where Failure == any Error {
  /// The result of an async throwing call.
  fileprivate init(catching body: () async throws -> Success) async {
    do {
      self = .success(try await body())
    } catch {
      self = .failure(error)
    }
  }
}
