import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The start check against a real SeaweedFS: a store that cannot be used is one clear error
/// naming the setting, before any request.
// One SeaweedFS at a time with the other heavy suites (.rescueTurn): a parallel run that started
// several at once starved the machine for seconds, and unrelated 30 s deadlines passed.
@Suite("Store start check (SeaweedFS)", .objectStore("StoreCheckTests"), .rescueTurn, .threadOfItsOwn)
struct StoreCheckTests {
  @Test(
    "the right settings pass; wrong credentials, a missing bucket, a bad endpoint, a read-only key each name the setting"
  )
  func startCheck() async throws {
    let store = try await SeaweedStore.start()
    defer { store.stop() }
    let scratch = try ScratchDirectory("store-check")
    defer { scratch.remove() }

    func check(_ name: String, configure: (inout StoreConfiguration) -> Void) async throws -> AttachmentError?
    {
      let pipeline = try StoreTierTests.pipeline(scratch, name, store: store, configure: configure)
      return await onOwnThread { () -> AttachmentError? in
        do throws(AttachmentError) {
          try pipeline.checkStore(timeout: .seconds(10))
          return nil
        } catch {
          return error
        }
      }
    }

    #expect(try await check("right") { _ in } == nil)
    let secret = try await check("secret") { $0.secretAccessKey = "wrong" }
    #expect(secret?.code == .storeUnavailable)
    #expect(secret?.message.contains("AWS_SECRET_ACCESS_KEY") == true, "\(String(describing: secret))")
    let key = try await check("key") { $0.accessKeyID = "AKIDUNKNOWN" }
    #expect(key?.message.contains("AWS_ACCESS_KEY_ID") == true, "\(String(describing: key))")
    let bucket = try await check("bucket") { $0.bucket = "no-such-bucket" }
    #expect(bucket?.message.contains("does not exist") == true, "\(String(describing: bucket))")
    #expect(bucket?.message.contains("--store") == true)
    let closed = try Loopback.freePort()
    let endpoint = try await check("endpoint") { $0.endpoint = "http://127.0.0.1:\(closed)" }
    #expect(endpoint?.message.contains("--store-endpoint") == true, "\(String(describing: endpoint))")
    let reader = try await check("reader") { $0.accessKeyID = store.readOnlyKey }
    #expect(reader?.message.contains("s3:PutObject") == true, "\(String(describing: reader))")
  }
}
