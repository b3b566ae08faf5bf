import Foundation

/// The large rescue samples, generated once by scripts/make-large-samples.sh into
/// `.build/large-samples` (kept between runs; about 20 MB, too large to commit).
enum LargeSamples {
  static let directory: String = {
    let root = URL(fileURLWithPath: Samples.directory).deletingLastPathComponent().deletingLastPathComponent()
    return root.appendingPathComponent(".build/large-samples").path
  }()

  /// Generates the samples when missing (idempotent, serialised), then answers the path of `name`.
  static func path(_ name: String) throws -> String {
    try generated.get()
    return directory + "/" + name
  }

  private static let generated: Result<Void, Error> = Result {
    let root = URL(fileURLWithPath: Samples.directory).deletingLastPathComponent().deletingLastPathComponent()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [root.appendingPathComponent("scripts/make-large-samples.sh").path, directory]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw CocoaError(
        .fileWriteUnknown, userInfo: ["reason": "make-large-samples.sh exited \(process.terminationStatus)"])
    }
  }
}
