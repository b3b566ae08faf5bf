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

  /// How the test damages the content object in the store.
  enum Damage: String, CaseIterable, Sendable {
    case sameLengthChanged, truncated

    func apply(to bytes: Data) -> Data {
      switch self {
      case .sameLengthChanged:
        var changed = bytes
        changed[changed.count / 2] ^= 0xFF
        return changed
      case .truncated:
        return bytes.prefix(bytes.count / 2)
      }
    }
  }

  @Test(
    "a corrupt content object (bytes changed, length kept; truncated) is never served, is counted, and is replaced",
    arguments: Damage.allCases)
  func corruptContent(_ damage: Damage) async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-corrupt")
    defer { scratch.remove() }
    let png = try Samples.bytes("png-rgba.png")
    origin.serve("/b.png", body: png, contentType: "image/png")
    let url = origin.url("/b.png")
    let first = try Self.pipeline(scratch, "one", store: store)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    let content = "/\(Self.bucket)/fleet/content/\(fetched.sha256).png"
    #expect(await store.put(content, damage.apply(to: Data(png))) == 200)

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)

    // Not served: fetched from the origin again, the right bytes delivered
    #expect(answer.source == .network)
    #expect(try Data(contentsOf: URL(fileURLWithPath: answer.path)) == Data(png))
    #expect(origin.requestCount(path: "/b.png") == 2)
    // Counted
    #expect(second.storeCounters?.corrupt == 1)
    #expect(second.storeCounters?.hits == 0)
    // Replaced: the write after the origin's answer overwrote the damaged object
    #expect(await second.finishStoreWrites(timeout: generousTimeout))
    #expect(await store.object(content) == Data(png))
    let third = try Self.pipeline(scratch, "three", store: store)
    let fromStore = try await third.attachment(for: url, timeout: generousTimeout)
    #expect(fromStore.source == .cache)
    #expect(third.storeCounters?.hits == 1)
    #expect(origin.requestCount(path: "/b.png") == 2)
  }

  @Test("a record whose content is missing is a miss")
  func recordWithoutContent() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-orphan")
    defer { scratch.remove() }
    let gif = try Samples.bytes("gif-animated.gif")
    origin.serve("/c.gif", body: gif, contentType: "image/gif")
    let url = origin.url("/c.gif")
    let first = try Self.pipeline(scratch, "one", store: store)
    let fetched = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))
    #expect(
      await store.status(method: "DELETE", path: "/\(Self.bucket)/fleet/content/\(fetched.sha256).gif") == 204
    )

    let second = try Self.pipeline(scratch, "two", store: store)
    let answer = try await second.attachment(for: url, timeout: generousTimeout)
    #expect(answer.source == .network)
    // A miss, not a hit nor a corrupt object: read once before the lease and once more after
    // finding the first instance's lease released (its record may have been written since).
    #expect((second.storeCounters?.misses ?? 0) >= 1)
    #expect(second.storeCounters?.hits == 0)
    #expect(second.storeCounters?.corrupt == 0)
    #expect(origin.requestCount(path: "/c.gif") == 2)
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
