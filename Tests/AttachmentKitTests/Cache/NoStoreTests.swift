import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// `no-store` bodies cannot fill the disk (issue #25, item 2): each is counted against the cap
/// while it exists, and removed when its caller releases it.
@Suite("Cache: no-store bodies", .threadOfItsOwn)
struct NoStoreTests {
  /// Stashed bodies now in the fixture's cache.
  static func stashed(_ fixture: PipelineFixture) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: fixture.scratch.path + "/cache/v3/tmp")) ?? [])
      .filter { $0.hasPrefix("unindexed-") }
  }

  @Test("each no-store answer has a file of its own, counted in the size ledger until released, then gone")
  func countedUntilReleased() async throws {
    // Given an origin answering five URLs with the same PNG, no-store
    let fixture = try PipelineFixture("no-store") { $0.cache.sweepsInBackground = false }
    defer { fixture.close() }
    let png = try Samples.bytes("png-rgba.png")
    let urls = (0..<5).map { fixture.server.url("/n\($0).png") }
    for index in 0..<5 {
      fixture.server.serve(
        "/n\(index).png", body: png, contentType: "image/png", headers: [("Cache-Control", "no-store")])
    }

    // When each is fetched
    var attachments: [AttachmentKit.Attachment] = []
    for url in urls {
      attachments.append(try await fixture.pipeline.attachment(for: url, timeout: generousTimeout))
    }

    // Then each has its own file outside the index, and the ledger counts all five
    #expect(Set(attachments.map(\.path)).count == 5)
    #expect(Self.stashed(fixture).count == 5)
    #expect(fixture.pipeline.cache.currentLedger() == Int64(5 * png.count))
    #expect(try fixture.pipeline.cache.stats().entries == 0)

    // When the callers release them
    for attachment in attachments { #expect(fixture.pipeline.release(attachment)) }

    // Then the files and their bytes in the ledger are gone
    #expect(Self.stashed(fixture).isEmpty)
    #expect(fixture.pipeline.cache.currentLedger() == 0)
  }

  @Test("a sweep keeps stashed bodies in use and evicts indexed content to make room for them")
  func indexedMakesRoom() async throws {
    // Given a cache of 3 PNGs' worth, holding two indexed PNGs, then three no-store answers
    // kept by their callers
    let png = try Samples.bytes("png-rgba.png")
    let fixture = try PipelineFixture("no-store-room") {
      $0.cache.maximumBytes = Int64(3 * png.count)
      $0.cache.sweepsInBackground = false
    }
    defer { fixture.close() }
    for index in 0..<2 {
      fixture.server.serve("/kept\(index).png", body: png + [UInt8(index)], contentType: "image/png")
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/kept\(index).png"), timeout: generousTimeout)
    }
    for index in 0..<3 {
      fixture.server.serve(
        "/n\(index).png", body: png, contentType: "image/png", headers: [("Cache-Control", "no-store")])
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/n\(index).png"), timeout: generousTimeout)
    }

    // When the cache is swept
    _ = try fixture.pipeline.cache.collectGarbage()

    // Then the stashed bodies stay (their callers may still read them) and the indexed content
    // was evicted for them
    #expect(Self.stashed(fixture).count == 3)
    #expect(try fixture.pipeline.cache.stats().entries == 0)
    // And the ledger the sweep wrote counts exactly the stashed bytes left on the disk.
    #expect(fixture.pipeline.cache.currentLedger() == Int64(3 * png.count))
  }

  @Test("the ledger a sweep writes counts the indexed content and the stashed bodies in use, to the byte")
  func sweptLedgerCountsStashes() async throws {
    // Given a cache without a limit holding two indexed files and three no-store answers kept
    // by their callers (each its own file, identical content or not)
    let png = try Samples.bytes("png-rgba.png")
    let fixture = try PipelineFixture("no-store-ledger") { $0.cache.sweepsInBackground = false }
    defer { fixture.close() }
    var indexed: Int64 = 0
    for index in 0..<2 {
      let body = png + [UInt8(index)]
      fixture.server.serve("/kept\(index).png", body: body, contentType: "image/png")
      _ = try await fixture.pipeline.attachment(
        for: fixture.server.url("/kept\(index).png"), timeout: generousTimeout)
      indexed += Int64(body.count)
    }
    var stashed: Int64 = 0
    var kept: [AttachmentKit.Attachment] = []
    for index in 0..<3 {
      let body = png
      fixture.server.serve(
        "/n\(index).png", body: body, contentType: "image/png", headers: [("Cache-Control", "no-store")])
      kept.append(
        try await fixture.pipeline.attachment(
          for: fixture.server.url("/n\(index).png"), timeout: generousTimeout))
      stashed += Int64(body.count)
    }
    // The ledger is first made unknown, so what is read afterwards is the sweep's own count.
    try fixture.pipeline.cache.lock.withExclusiveLockedFile { fd throws(AttachmentError) in
      CacheLedger.forget(fd)
    }
    #expect(fixture.pipeline.cache.currentLedger() == nil)

    // When the cache is swept
    let report = try fixture.pipeline.cache.collectGarbage()

    // Then the ledger holds the indexed content and every stashed body still in use, exactly
    #expect(report.bytes == indexed)
    #expect(Self.stashed(fixture).count == 3)
    #expect(fixture.pipeline.cache.currentLedger() == indexed + stashed)

    // And releasing the stashes takes exactly their bytes out again
    for attachment in kept { #expect(fixture.pipeline.release(attachment)) }
    #expect(fixture.pipeline.cache.currentLedger() == indexed)
  }
}
