import Foundation
import Glibc
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A hit reuses a record's decoding only while the stored record holds the bytes it came from
/// (``DecodedRecords``): a record rewritten by another process is read as it is now.
@Suite("Cache: decoded records follow the store", .threadOfItsOwn)
struct DecodedRecordsTests {

  @Test("a hit decodes a record again once its bytes change: a record made stale elsewhere is stale here")
  func decodedRecordsFollowTheFile() async throws {
    // Given a fresh JPEG, hit twice (its decoding kept)
    let fixture = try PipelineFixture("decoded")
    defer { fixture.close() }
    fixture.server.serve(
      "/f.jpg", body: try Samples.bytes("jpeg-baseline.jpg"), contentType: "image/jpeg",
      headers: [("Cache-Control", "max-age=600")])
    let url = try AttachmentURL(fixture.server.url("/f.jpg"))
    _ = try await fixture.pipeline.attachment(AttachmentRequest(url: url, deadline: .now + generousTimeout))
    for _ in 0..<2 {
      guard case .hit = fixture.pipeline.lookup(url) else {
        Issue.record("no hit")
        return
      }
    }

    // When another writer rewrites the record with a lifetime that has ended
    let text = try #require(fixture.pipeline.cache.recordText(forURL: url.text))
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      line.hasPrefix("fresh ") ? "fresh 1.5" : String(line)
    }
    try fixture.pipeline.cache.replaceRecordText(lines.joined(separator: "\n"), forURL: url.text)

    // Then the next lookup reads the new bytes: the copy is stale, to revalidate
    guard case .stale = fixture.pipeline.lookup(url) else {
      Issue.record("the old decoding was served after the record changed")
      return
    }
  }
}
