import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The object store as the cache's second tier, against a real SeaweedFS started by each test
/// (`weed mini` on loopback, ports of its own) and the real test origin: instances with caches
/// of their own share what one fetched; every byte read from the store is verified.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn): a parallel run that started
// several at once starved the machine for seconds, and unrelated 30 s deadlines passed.
@Suite("Store tier (SeaweedFS)", .objectStore("StoreTierTests"), .rescueTurn, .threadOfItsOwn)
struct StoreTierTests {
  static let bucket = "attachkit-fleet"

  /// A pipeline over its own cache directory in `scratch`, with `store` behind it.
  static func pipeline(
    _ scratch: ScratchDirectory, _ name: String, store: SeaweedStore, secret: String? = nil,
    bucket: String = bucket, configure: (inout StoreConfiguration) -> Void = { _ in }
  ) throws -> AttachmentPipeline {
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/" + name)
    configuration.downloader.allowPrivateNetworks = true
    var shared = try StoreConfiguration(
      location: "s3://\(bucket)/fleet", endpoint: store.endpoint, accessKeyID: store.accessKey,
      secretAccessKey: secret ?? store.secretKey)
    shared.logsFailures = false
    configure(&shared)
    configuration.store = shared
    return try AttachmentPipeline(configuration: configuration)
  }

  @Test("an instance with an empty cache answers from the store, without the origin; the bytes verified")
  func secondInstanceFromStore() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-tier")
    defer { scratch.remove() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    origin.serve("/a.jpg", body: jpeg, contentType: "image/jpeg")
    let url = origin.url("/a.jpg")

    let first = try Self.pipeline(scratch, "one", store: store)
    try await onOwnThread { () throws(AttachmentError) in try first.checkStore() }  // blocking: off the pool
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(fetched.source == .network)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    #expect(first.storeCounters?.writes == 1)
    let content = "/\(Self.bucket)/fleet/content/\(fetched.sha256).jpg"
    #expect(await store.object(content) == Data(jpeg))

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)
    #expect(answer.source == .cache)
    #expect(answer.sha256 == fetched.sha256)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(jpeg))
    #expect(answer.path.hasPrefix(scratch.path + "/two/"))
    #expect(origin.requestCount(path: "/a.jpg") == 1)
    #expect(second.storeCounters?.hits == 1)
    // Adopted into its local cache: the next answer is a local hit, the store not asked.
    let again = try await second.attachment(for: url, timeout: generousTimeout)
    #expect(again.path == answer.path)
    #expect(second.storeCounters?.hits == 1)
  }

  /// How the test damages the stored bytes.
  enum Damage: String, CaseIterable, Sendable {
    case sameLengthChanged, truncated

    /// `bytes` damaged; of a record object, its tail (where inline content is).
    func apply(to bytes: Data) -> Data {
      switch self {
      case .sameLengthChanged:
        var changed = bytes
        changed[changed.count - 100] ^= 0xFF
        return changed
      case .truncated:
        return bytes.prefix(bytes.count - 200)
      }
    }
  }

  /// Where the damaged bytes are: a large entry's content object, or a small entry's content
  /// inline in its record object (FleetStore+RecordObject.swift).
  enum Placement: String, CaseIterable, Sendable {
    case contentObject, inlineInRecord
  }

  /// A 400 KB PCM WAV: over the inline limit, so its readers read its content object.
  static let largeWAV = Data(ProbeFixtures.wav(samples: 200_000))

  @Test(
    "a corrupt copy in the store (bytes changed, length kept; truncated; in a content object or inline in a record) is never served, is counted, and is replaced",
    arguments: Damage.allCases, Placement.allCases)
  func corruptContent(_ damage: Damage, _ placement: Placement) async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-corrupt")
    defer { scratch.remove() }
    let body = placement == .contentObject ? Self.largeWAV : Data(try Samples.bytes("png-rgba.png"))
    #expect((Int64(body.count) > FleetStore.inlineLimit) == (placement == .contentObject))
    let path = placement == .contentObject ? "/b.wav" : "/b.png"
    origin.serve(
      path, body: Array(body), contentType: placement == .contentObject ? "audio/wav" : "image/png")
    let url = origin.url(path)
    let first = try Self.pipeline(scratch, "one", store: store)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    let recordName = try #require(FleetStore.recordName(for: try AttachmentURL(url).key))
    let damagedPath =
      placement == .contentObject
      ? "/\(Self.bucket)/fleet/content/\(fetched.sha256).wav" : "/\(Self.bucket)/fleet/\(recordName)"
    let stored = try #require(await store.object(damagedPath))
    #expect(await store.put(damagedPath, damage.apply(to: stored)) == 200)

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)

    // Not served: fetched from the origin again, the right bytes delivered
    #expect(answer.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == body)
    #expect(origin.requestCount(path: path) == 2)
    // Counted
    #expect(second.storeCounters?.corrupt == 1)
    #expect(second.storeCounters?.hits == 0)
    // Replaced: the write after the origin's answer overwrote the damaged object
    #expect(await second.finishStoreWrites(timeout: generousTimeout))
    let replaced = try #require(await store.object(damagedPath))
    switch placement {
    case .contentObject: #expect(replaced == stored)
    case .inlineInRecord:
      // Rewritten by the second instance (its own fetch time): its inline copy intact again
      let inline = FleetStore.splitRecordObject(Array(replaced))?.inline
      #expect(inline.map { Data($0) } == body)
    }
    let third = try Self.pipeline(scratch, "three", store: store)
    let fromStore = try await third.attachment(for: url, timeout: generousTimeout)
    #expect(fromStore.source == .cache)
    #expect(third.storeCounters?.hits == 1)
    #expect(origin.requestCount(path: path) == 2)
  }

  @Test("a small entry is answered from its record object alone: its content object is not read")
  func smallEntryInline() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-inline")
    defer { scratch.remove() }
    let jpeg = try Samples.bytes("jpeg-baseline.jpg")
    origin.serve("/i.jpg", body: jpeg, contentType: "image/jpeg")
    let url = origin.url("/i.jpg")
    let first = try Self.pipeline(scratch, "one", store: store)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    // Written as the layout says (the content object first), then removed by the test
    let content = "/\(Self.bucket)/fleet/content/\(fetched.sha256).jpg"
    #expect(await store.object(content) == Data(jpeg))
    #expect(await store.status(method: "DELETE", path: content) == 204)

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)

    #expect(answer.source == .cache)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(jpeg))
    #expect(second.storeCounters?.hits == 1)
    #expect(origin.requestCount(path: "/i.jpg") == 1)
  }

  @Test("a record whose content is missing is a miss")
  func recordWithoutContent() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-orphan")
    defer { scratch.remove() }
    // Over the inline limit: its record object holds no copy of it.
    origin.serve("/c.wav", body: Array(Self.largeWAV), contentType: "audio/wav")
    let url = origin.url("/c.wav")
    let first = try Self.pipeline(scratch, "one", store: store)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    #expect(
      await store.status(method: "DELETE", path: "/\(Self.bucket)/fleet/content/\(fetched.sha256).wav") == 204
    )

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)
    #expect(answer.source == .network)
    // A miss, not a hit nor a corrupt object: read once before the lease and once more after
    // finding the first instance's lease released (its record may have been written since).
    #expect((second.storeCounters?.misses ?? 0) >= 1)
    #expect(second.storeCounters?.hits == 0)
    #expect(second.storeCounters?.corrupt == 0)
    #expect(origin.requestCount(path: "/c.wav") == 2)
  }

  @Test("the store's requests reuse a kept handle's connection: a hit's second request opens none")
  func connectionsReused() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let configuration = try StoreConfiguration(
      location: "s3://\(Self.bucket)/fleet", endpoint: store.endpoint, accessKeyID: store.accessKey,
      secretAccessKey: store.secretKey)
    let client = StoreClient(configuration: configuration)
    let responses = await onOwnThread { () -> [StoreResponse] in  // blocking: off the pool
      (0..<3).map { _ in client.get("records/none", maximumBytes: 4096, timeout: .seconds(10)) }
    }
    #expect(responses.map(\.status) == [404, 404, 404])
    #expect(responses.map(\.connectionsOpened) == [1, 0, 0])
  }
}
