import Foundation
import TestSupport

@testable import AttachmentKit

/// A fresh directory under the system temp folder for one test, removed by `remove()`.
struct ScratchDirectory {
  let path: String

  init(_ label: String = "test") throws {
    let base = FileManager.default.temporaryDirectory.path
    path = "\(base)/attachkit-\(label)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  /// Names of the files in the directory.
  func contents() -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
  }

  /// Names of temporary body files left in the directory.
  func leftovers() -> [String] {
    contents().filter { $0.hasPrefix(".attachkit-") }
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}

/// Deterministic pseudo-random bytes (xorshift), so a test's body is reproducible.
func testBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
  var state = seed
  var out = [UInt8]()
  out.reserveCapacity(count)
  while out.count < count {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    withUnsafeBytes(of: state) { out.append(contentsOf: $0.prefix(count - out.count)) }
  }
  return out
}

/// Elapsed time of `body`, in seconds.
func measure<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
  let start = ContinuousClock.now
  let value = try await body()
  let elapsed = ContinuousClock.now - start
  let (s, atto) = elapsed.components
  return (value, Double(s) + Double(atto) / 1e18)
}

extension DownloaderConfiguration {
  /// The default configuration with private networks allowed: the test server is on loopback.
  static var loopback: DownloaderConfiguration {
    var configuration = DownloaderConfiguration()
    configuration.allowPrivateNetworks = true
    return configuration
  }
}
