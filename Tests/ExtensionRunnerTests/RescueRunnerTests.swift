import Foundation
import TestSupport
import TestTraits
import Testing

/// The extension runner rescues near-miss images by default: showing something is its job.
@Suite("Runner: rescue on by default", .threadOfItsOwn)
struct RescueRunnerTests {
  static let payload =
    #"{"aps": {"alert": "photo", "mutable-content": 1}, "attachments": [{"url": "{BASE}/media/heic-still.heic", "id": "photo"}]}"#

  @Test("a HEIC attachment is delivered as a JPEG by default, and refused with --no-rescue")
  func heicDelivered() async throws {
    // Given a payload whose one attachment is a HEIC photo
    let fixture = try RunnerFixture("rescue")
    defer { fixture.close() }
    let payload = try fixture.write("heic.json", Self.payload)

    // When the runner runs it by default, then with --no-rescue (into another cache)
    let rescued = await fixture.runInProcess(fixture.commonArguments + [payload])
    let refused = await fixture.runInProcess(
      [
        "--base-url", fixture.server.baseURL, "--cache-dir", fixture.scratch + "/plain", "--attachments-dir",
        fixture.scratch + "/plain-delivered", "--allow-private-networks", "--no-rescue", "--trace", payload,
      ])

    // Then the default delivered one JPEG attachment, typed as such; --no-rescue delivered none
    let delivered = try rescued.output().attachments
    #expect(delivered.map(\.identifier) == ["photo"])
    #expect(delivered.first?.typeHint == "public.jpeg")
    #expect(delivered.first?.path.hasSuffix(".jpg") == true)
    #expect(try refused.output().attachments.isEmpty)
    #expect(try refused.output().trace?.contains { $0.detail.contains("unsupported_type") } == true)
  }
}
