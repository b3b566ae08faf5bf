import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A rescued entry through the store: the record carries the rescue (its actions, the source's
/// type), so an instance with an empty cache answers with the derivative without the origin and
/// without a rescue, and an instance without the rescuer is never served it.
@Suite(
  "Store tier: rescued entries (SeaweedFS)", .objectStore("StoreRescueTests"), .rescueTurn, .threadOfItsOwn)
struct StoreRescueTests {
  @Test(
    "a converted WebP read from the store by an empty instance: no origin request, no rescue; refused without the rescuer"
  )
  func rescuedEntryFromStore() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let scratch = try ScratchDirectory("store-rescue")
    defer { scratch.remove() }
    origin.serve("/w", body: try Samples.bytes("webp-lossy.webp"), contentType: "image/webp")
    let url = origin.url("/w")

    func pipeline(_ name: String, rescue: Bool) throws -> AttachmentPipeline {
      var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/" + name)
      configuration.downloader.allowPrivateNetworks = true
      if rescue { configuration.rescue = RescueConfiguration() }
      var shared = try StoreConfiguration(
        location: "s3://\(StoreTierTests.bucket)/fleet", endpoint: store.endpoint,
        accessKeyID: store.accessKey,
        secretAccessKey: store.secretKey)
      shared.logsFailures = false
      configuration.store = shared
      return try AttachmentPipeline(configuration: configuration)
    }

    let first = try pipeline("one", rescue: true)
    let rescued = try await first.attachment(for: url, timeout: generousTimeout)
    #expect(rescued.validation.rescued != nil)
    #expect(await first.finishStoreWrites(timeout: generousTimeout))

    // The fourth instance: empty cache, the rescuer on; a rescue would need the source's bytes,
    // and the origin was not asked for them again.
    let fourth = try pipeline("four", rescue: true)
    let answer = try await fourth.attachment(for: url, timeout: generousTimeout)
    #expect(answer.source == .cache)
    #expect(answer.sha256 == rescued.sha256)
    #expect(answer.validation.rescued == rescued.validation.rescued)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: answer.path))
        == Data(contentsOf: URL(fileURLWithPath: rescued.path)))
    #expect(origin.requestCount(path: "/w") == 1)
    #expect(fourth.storeCounters?.hits == 1)

    // Without the rescuer: the derivative is never served as the original
    let plain = try pipeline("plain", rescue: false)
    let refusal = await #expect(throws: AttachmentError.self) {
      try await plain.attachment(for: url, timeout: generousTimeout)
    }
    #expect(refusal?.code == .unsupportedType)
  }
}
