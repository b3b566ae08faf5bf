import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve` with `no-store` origins (issue #25, item 2): each body is removed once its answer
/// has it open, so thirty of them leave nothing on the disk.
@Suite("serve: no-store bodies", .threadOfItsOwn)
struct NoStoreServeTests {
  @Test("30 distinct no-store answers of 2 MiB through --max-cache-bytes 1MB leave no body on disk")
  func noStoreLeavesNothing() async throws {
    // Given an origin answering 30 URLs with distinct 2 MiB MP4s (the sample, padded in a free
    // box) under Cache-Control: no-store
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let mp4 = try Media.bytes("mp4-avc1.mp4")
    for index in 0..<30 {
      let padding = 2 * 1024 * 1024 - mp4.count - 8
      let size = UInt32(padding + 8)
      let free =
        withUnsafeBytes(of: size.bigEndian) { Array($0) } + Array("free".utf8)
        + [UInt8](repeating: UInt8(index), count: padding)
      origin.serve(
        "/v\(index).mp4", body: mp4 + free, contentType: "video/mp4", headers: [("Cache-Control", "no-store")]
      )
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--max-cache-bytes", "1MB"])
    defer { serve.stop() }

    // When each is downloaded through serve
    for index in 0..<30 {
      let answer = try await Curl.get(
        serve.url(try await serve.signed(origin.url("/v\(index).mp4"), keyFile: workspace.keyFile)))
      #expect(answer.status == 200)
      #expect(answer.body.count == 2 * 1024 * 1024)
    }

    // Then no stashed body is left in the cache's tmp directory
    let left = ((try? FileManager.default.contentsOfDirectory(atPath: workspace.cache + "/v3/tmp")) ?? [])
      .filter { $0.hasPrefix("unindexed-") }
    #expect(left.isEmpty, "\(left.count) no-store bodies left behind")
  }
}
