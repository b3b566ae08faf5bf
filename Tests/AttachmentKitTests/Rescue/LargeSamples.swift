import Foundation
import TestSupport

/// The large rescue samples, generated once by scripts/make-large-samples.sh into
/// `.build/large-samples` (kept between runs; about 20 MB, too large to commit). The script
/// runs on a thread of its own; every caller awaits the one run.
enum LargeSamples {
  static let directory: String = {
    let root = URL(fileURLWithPath: Samples.directory).deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/large-samples").path
  }()

  /// Generates the samples when missing (idempotent, serialised), then answers the path of `name`.
  static func path(_ name: String) async throws -> String {
    try await generated.value.get()
    return directory + "/" + name
  }

  private static let generated = Task { await onOwnThread { Result { try generate() } } }

  private static func generate() throws {
    let root = URL(fileURLWithPath: Samples.directory).deletingLastPathComponent().deletingLastPathComponent()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [root.appendingPathComponent("scripts/make-large-samples.sh").path, directory]
    try process.runClosingChildEnds()
    process.blockUntilExit()
    process.closeStandardPipes()
    guard process.terminationStatus == 0 else {
      throw CocoaError(
        .fileWriteUnknown, userInfo: ["reason": "make-large-samples.sh exited \(process.terminationStatus)"])
    }
  }
}
