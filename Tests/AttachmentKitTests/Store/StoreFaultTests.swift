import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A store that fails during a run never becomes the client's problem: every request is
/// answered (from the origin or the local cache) within its deadline, the store costing each at
/// most its share (a quarter of the time left, at most 3 s); failed writes are counted and
/// dropped; once the store is back, new entries reach it.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn): a parallel run that started
// several at once starved the machine for seconds, and unrelated 30 s deadlines passed.
@Suite("Store faults (SeaweedFS)", .objectStore("StoreFaultTests"), .rescueTurn, .threadOfItsOwn)
struct StoreFaultTests {
  @Test(
    "the store killed during a run: every request answered from the origin or the local cache; back, new entries reach it"
  )
  func storeDown() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-down")
    defer { scratch.remove() }
    for name in ["a", "b", "c"] {
      origin.serve("/\(name).png", body: try Samples.bytes("png-rgba.png"), contentType: "image/png")
    }
    let pipeline = try StoreTierTests.pipeline(scratch, "one", store: store) { $0.writeAttempts = 2 }
    _ = try await pipeline.attachment(for: origin.url("/a.png"), timeout: generousTimeout)
    #expect(await pipeline.finishStoreWrites(timeout: generousTimeout))

    store.kill()
    // A second instance: a store miss (refused), so the origin; the first: its local cache
    let other = try StoreTierTests.pipeline(scratch, "two", store: store) { $0.writeAttempts = 2 }
    let fromOrigin = try await other.attachment(for: origin.url("/a.png"), timeout: .seconds(10))
    #expect(fromOrigin.source == .network)
    let local = try await pipeline.attachment(for: origin.url("/a.png"), timeout: .seconds(10))
    #expect(local.source == .cache)
    let new = try await pipeline.attachment(for: origin.url("/b.png"), timeout: .seconds(10))
    #expect(new.source == .network)
    #expect(await pipeline.finishStoreWrites(timeout: generousTimeout))
    #expect((other.storeCounters?.readFailures ?? 0) >= 1)
    #expect((pipeline.storeCounters?.writesDropped ?? 0) >= 1)
    #expect((pipeline.storeCounters?.writeFailures ?? 0) >= 2)

    try await store.launch()
    let back = try await pipeline.attachment(for: origin.url("/c.png"), timeout: generousTimeout)
    #expect(back.source == .network)
    #expect(await pipeline.finishStoreWrites(timeout: generousTimeout))
    let records = try #require(FleetStore.recordName(for: try AttachmentURL(origin.url("/c.png")).key))
    #expect(await store.object("/\(StoreTierTests.bucket)/fleet/\(records)") != nil)
  }

  @Test("a store that stops answering costs a request its share of the deadline, not the deadline")
  func storeStalled() async throws {
    let store = try await SeaweedStore.start()
    defer {
      store.thaw()
      store.stop()
    }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-stalled")
    defer { scratch.remove() }
    origin.serve("/d.png", body: try Samples.bytes("png-rgba.png"), contentType: "image/png")
    let pipeline = try StoreTierTests.pipeline(scratch, "one", store: store) {
      $0.writeAttempts = 1
      $0.writeTimeoutSeconds = 1
    }
    store.freeze()

    // A 12 s deadline: the store may take 3 s of it (a quarter, at most 3 s); without the bound
    // its reads would run to the deadline and the request would fail there.
    let deadline = Duration.seconds(12)
    let start = ContinuousClock.now
    let answer = try await pipeline.attachment(for: origin.url("/d.png"), timeout: deadline)
    let elapsed = ContinuousClock.now - start
    #expect(answer.source == .network)
    #expect(elapsed < .seconds(3) + deadlineMargin, "answered after \(elapsed)")
    #expect(pipeline.storeCounters?.readFailures == 1)
    #expect(origin.requestCount(path: "/d.png") == 1)
  }
}
