import Foundation

/// Polls `condition` every 5 ms until it holds or `seconds` pass; the bound only stops a
/// broken test. It suspends between looks, holding no thread.
public func eventually(
  within seconds: Double = 20, _ condition: () async throws -> Bool
) async rethrows -> Bool {
  let end = Date().addingTimeInterval(seconds)
  while Date() < end {
    if try await condition() { return true }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return try await condition()
}
