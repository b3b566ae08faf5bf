import Foundation
import TestSupport
import TestTraits
import Testing

/// `extension-runner --store` against a real SeaweedFS: the rescued attachment one extension
/// fetched is in the fleet's store when its run ends, so a second extension (another device's,
/// with a cache of its own) delivers it without the origin and without a rescue; a store that
/// refuses the credentials costs the delivery nothing and says so in the trace.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn).
@Suite("Runner: --store (SeaweedFS)", .objectStore("StoreRunnerTests"), .rescueTurn, .threadOfItsOwn)
struct StoreRunnerTests {
  static let payload =
    #"{"aps": {"alert": "photo", "mutable-content": 1}, "attachments": [{"url": "{BASE}/media/heic-still.heic", "id": "photo"}]}"#

  static func environment(_ store: SeaweedStore, secret: String? = nil) -> [String: String] {
    [
      "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": secret ?? store.secretKey,
      "AWS_ENDPOINT_URL_S3": store.endpoint, "AWS_REGION": "us-east-1", "AWS_PROFILE": "",
      "AWS_SESSION_TOKEN": "",
    ]
  }

  /// The runner's arguments with a cache and delivery directory named `name`.
  static func arguments(_ fixture: RunnerFixture, _ name: String, _ payload: String) -> [String] {
    [
      "--base-url", fixture.server.baseURL, "--cache-dir", fixture.scratch + "/\(name)-cache",
      "--attachments-dir", fixture.scratch + "/\(name)-delivered", "--allow-private-networks", "--store",
      "s3://attachkit-fleet/runner", "--trace", payload,
    ]
  }

  /// The trace's `store` line on standard error (written after the delivery, once the store
  /// writes are done: the delivered JSON's trace ends at the delivery).
  static func storeStep(_ run: RunResult) -> String? {
    run.standardError.split(separator: "\n").first { $0.hasPrefix("trace") && $0.contains(" store ") }
      .map(String.init)
  }

  @Test("a second extension with an empty cache delivers the first one's rescued attachment from the store")
  func secondDeviceFromTheStore() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let fixture = try RunnerFixture("store")
    defer { fixture.close() }
    let payload = try fixture.write("heic.json", Self.payload)

    // When one extension runs the payload, then another with a cache of its own
    let first = try await fixture.runBinary(
      Self.arguments(fixture, "first", payload), environment: Self.environment(store))
    let second = try await fixture.runBinary(
      Self.arguments(fixture, "second", payload), environment: Self.environment(store))

    // Then both delivered the same JPEG; the origin was asked once, and the second run's
    // trace shows a store hit where the first shows its write
    let one = try #require(try first.output().attachments.first, "\(first.standardError)")
    let two = try #require(try second.output().attachments.first, "\(second.standardError)")
    #expect(one.typeHint == "public.jpeg")
    #expect(FileManager.default.contents(atPath: one.path) == FileManager.default.contents(atPath: two.path))
    #expect(fixture.server.requestCount(path: "/media/heic-still.heic") == 1)
    let firstStore = Self.storeStep(first)
    let secondStore = Self.storeStep(second)
    #expect(firstStore?.contains(" ok ") == true, "\(first.standardError)")
    #expect(firstStore?.contains("1 write(s)") == true, "\(first.standardError)")
    #expect(secondStore?.contains("1 hit(s)") == true, "\(second.standardError)")
  }

  @Test("wrong credentials: the attachment is delivered from the origin, and the trace's store step failed")
  func refusingStoreCostsNothing() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let fixture = try RunnerFixture("store-refused")
    defer { fixture.close() }
    let payload = try fixture.write("heic.json", Self.payload)

    let run = try await fixture.runBinary(
      Self.arguments(fixture, "refused", payload),
      environment: Self.environment(store, secret: "wrong-secret"))

    #expect(run.status == 0)
    #expect(try run.output().attachments.map(\.typeHint) == ["public.jpeg"], "\(run.standardError)")
    let step = Self.storeStep(run)
    #expect(step?.contains(" failed ") == true, "\(run.standardError)")
    #expect(step?.contains("read failure") == true, "\(run.standardError)")
  }
}
