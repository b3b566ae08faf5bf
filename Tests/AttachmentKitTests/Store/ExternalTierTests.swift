import AttachmentKit
import Foundation
import Glibc
import PosixLock
import TestSupport
import Testing

/// A shared tier written outside the module, through the public protocol alone (this file does
/// not import AttachmentKit with `@testable`): entries kept in memory, their records as the bytes
/// ``TierEntry/serialized`` gives. Two pipelines over their own cache directories share it.
@Suite("Shared tier: a conformer outside the module")
struct ExternalTierTests {
  /// Entries in memory by cache key: the record's bytes and the content's. A `lying` tier
  /// answers each read with the content's bytes changed (its length kept) and says it found it.
  final class MemoryTier: SharedTier {
    private let entries = Locked<[String: (record: [UInt8], content: [UInt8])]>([:])
    let lying: Bool

    init(lying: Bool = false) { self.lying = lying }

    var count: Int { entries.withLock { $0.count } }

    func read(_ key: TierKey, into destination: Int32, maximumBytes: Int64, budget: Duration) -> TierRead {
      guard let found = entries.withLock({ $0[key.normalized] }) else { return .missing }
      guard let entry = TierEntry(serialized: found.record, key: key), entry.bytes <= maximumBytes,
        Int64(found.content.count) == entry.bytes
      else { return .failed }
      var content = found.content
      if lying { content[content.count / 2] ^= 0xFF }
      let written = content.withUnsafeBytes { Glibc.write(destination, $0.baseAddress, $0.count) }
      return written == content.count ? .found(entry) : .failed
    }

    func write(_ entry: TierEntry, of key: TierKey, contentPath: String) {
      guard let content = FileManager.default.contents(atPath: contentPath) else { return }
      entries.withLock { $0[key.normalized] = (entry.serialized, Array(content)) }
    }
  }

  /// A pipeline over `scratch/name` with `tier` behind its local cache.
  static func pipeline(_ scratch: ScratchDirectory, _ name: String, _ tier: MemoryTier) throws
    -> AttachmentPipeline
  {
    try SharedTierTests.pipeline(scratch, name, shared: tier)
  }

  @Test("an entry one pipeline wrote to an outside tier answers another pipeline without the origin")
  func outsideConformer() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("external-tier")
    defer { scratch.remove() }
    let png = try Samples.bytes("png-rgba.png")
    origin.serve("/c.png", body: png, contentType: "image/png")
    let url = origin.url("/c.png")
    let tier = MemoryTier()

    let first = try Self.pipeline(scratch, "one", tier)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    #expect(tier.count == 1)
    let answer = try await Self.pipeline(scratch, "two", tier).attachment(for: url, timeout: generousTimeout)

    #expect(fetched.source == .network)
    #expect(answer.source == .cache)
    #expect(answer.sha256 == fetched.sha256)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(png))
    #expect(origin.requestCount(path: "/c.png") == 1)
  }

  @Test(
    "a tier that says it found an entry but writes other bytes (same length) is not believed: the origin answers"
  )
  func lyingConformerNotBelieved() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("external-tier-lying")
    defer { scratch.remove() }
    let png = try Samples.bytes("png-rgba.png")
    origin.serve("/d.png", body: png, contentType: "image/png")
    let url = origin.url("/d.png")
    // Given a tier that holds the entry but changes its bytes on every read
    let tier = MemoryTier(lying: true)
    let first = try Self.pipeline(scratch, "one", tier)
    _ = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    #expect(tier.count == 1)

    // When an instance with an empty cache asks for the file
    let answer = try await Self.pipeline(scratch, "two", tier).attachment(for: url, timeout: generousTimeout)

    // Then the pipeline checked the bytes itself: fetched again, the origin's bytes answered
    #expect(answer.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(png))
    #expect(origin.requestCount(path: "/d.png") == 2)
  }
}
