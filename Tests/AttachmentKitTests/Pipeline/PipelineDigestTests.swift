import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The digest a miss publishes under: a small body is hashed by the check as it reads it (not
/// on the engine thread), a large one during its transfer; either way it must be the body's
/// SHA-256, whatever parts of the file the format's walk read.
@Suite("Pipeline digest", .threadOfItsOwn)
struct PipelineDigestTests {
  @Test("every accepted sample, and a body past 1 MiB, is published under its own SHA-256")
  func digestsMatchTheOracle() async throws {
    let fixture = try PipelineFixture()
    defer { fixture.close() }
    let scratch = try ScratchDirectory("pipeline-digest")
    defer { scratch.remove() }
    var bodies: [(String, [UInt8])] = try Samples.accepted.map { ($0.file, try Samples.bytes($0.file)) }
    let large = ProbeFixtures.wav(samples: 800_000)  // 1.6 MB: hashed during the transfer
    #expect(Int64(large.count) > BodyDigest.inlineBytes)
    bodies.append(("large.wav", large))
    for (index, (name, body)) in bodies.enumerated() {
      fixture.server.serve("/d/\(index)", body: body, contentType: "application/octet-stream")
      let attachment = try await fixture.pipeline.attachment(
        for: fixture.server.url("/d/\(index)"), timeout: generousTimeout)
      let oracle = try await sha256sum(body, in: scratch.path)
      #expect(attachment.sha256 == oracle, "\(name)")
      #expect(attachment.path.contains(oracle), "\(name): the content file is named by its digest")
    }
    let left = await fixture.leftBehind()
    #expect(left.isEmpty, "left behind: \(left)")
  }
}
