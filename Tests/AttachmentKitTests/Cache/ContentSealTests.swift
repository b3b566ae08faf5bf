import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A hit never serves damaged bytes of the right size (issue #25, item 12): the record keeps
/// the content file's inode and change time, and a hit whose file no longer matches them
/// re-hashes it before serving.
@Suite("Cache: content seals", .threadOfItsOwn)
struct ContentSealTests {
  typealias Fixture = PipelineTests.Fixture

  /// A fetched JPEG: the fixture, its URL, the bytes served and the stored content's path.
  static func stored() async throws -> (Fixture, String, [UInt8], String) {
    let fixture = try Fixture()
    let jpeg = try Samples.bytes("jpeg-progressive.jpg")
    fixture.server.serve("/s.jpg", body: jpeg, contentType: "image/jpeg")
    let url = fixture.server.url("/s.jpg")
    let first = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    return (fixture, url, jpeg, first.path)
  }

  /// The `seal` line of the record of `url`, or nil.
  static func recordedSeal(_ fixture: Fixture, _ url: String) -> String? {
    guard let text = fixture.pipeline.cache.recordText(forURL: url) else { return nil }
    return text.split(separator: "\n").first { $0.hasPrefix("seal ") }.map { String($0.dropFirst(5)) }
  }

  @Test(
    "a byte flipped in place (same size) is not served by the next hit: the file is removed and fetched again"
  )
  func flippedByteOnHit() async throws {
    // Given a stored JPEG whose content file then gets one byte flipped in place, with no
    // verify run
    let (fixture, url, jpeg, path) = try await Self.stored()
    defer { fixture.close() }
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    try handle.seek(toOffset: 200)
    let byte = try #require(try handle.read(upToCount: 1)?.first)
    try handle.seek(toOffset: 200)
    try handle.write(contentsOf: Data([byte ^ 0x01]))
    try handle.close()

    // When it is asked for again
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then it is fetched again and the delivered file has the served bytes
    #expect(again.source == .network)
    #expect(fixture.server.requestCount(path: "/s.jpg") == 2)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(jpeg))
    // and a third call is a hit on the good bytes
    let third = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)
    #expect(third.source == .cache)
    #expect(try Data(contentsOf: URL(fileURLWithPath: third.path)) == Data(jpeg))
  }

  @Test(
    "a change of the content's change time alone (chmod) re-hashes once, serves the hit and reseals the record"
  )
  func changedButIntact() async throws {
    // Given a stored JPEG whose record is sealed with its content file's inode and change time
    let (fixture, url, jpeg, path) = try await Self.stored()
    defer { fixture.close() }
    var info = stat()
    try #require(lstat(path, &info) == 0)
    let sealed = try #require(Self.recordedSeal(fixture, url))
    #expect(sealed == "\(info.st_ino) \(info.st_ctim.tv_sec) \(info.st_ctim.tv_nsec)")

    // When the file's change time moves (its mode set again: the bytes are the same) until the
    // clock shows it, and the URL is asked for again
    var changed = info
    while changed.st_ctim.tv_sec == info.st_ctim.tv_sec && changed.st_ctim.tv_nsec == info.st_ctim.tv_nsec {
      try #require(chmod(path, 0o600) == 0)
      try #require(lstat(path, &changed) == 0)
    }
    let again = try await fixture.pipeline.attachment(for: url, timeout: generousTimeout)

    // Then it is a hit with the same bytes, and the record now holds the new seal
    #expect(again.source == .cache)
    #expect(fixture.server.requestCount(path: "/s.jpg") == 1)
    #expect(try Data(contentsOf: URL(fileURLWithPath: again.path)) == Data(jpeg))
    #expect(
      Self.recordedSeal(fixture, url)
        == "\(changed.st_ino) \(changed.st_ctim.tv_sec) \(changed.st_ctim.tv_nsec)")
  }
}
