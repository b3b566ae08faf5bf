import Foundation
import TestSupport
import TestTraits
import Testing

/// The README's library section as a user meets it: a package of its own, depending on this one
/// by path with the README's `Package.swift` lines, whose `main.swift` is the README's example
/// calling `attachment(for: URL)` (scripts/consumer-test.sh builds and runs it).
///
/// It compiles the library again (2.5 min beside the rest of the suite on CI's two cores, whose
/// other tests it then slowed past their own bounds), so it runs alone, after the suite:
/// scripts/test.sh runs it with `ATTACHKIT_CONSUMER_TEST=1`; without that it is skipped.
@Suite(
  "The library from a package of its own", .threadOfItsOwn,
  .enabled(
    if: ProcessInfo.processInfo.environment["ATTACHKIT_CONSUMER_TEST"] == "1",
    "run alone by scripts/test.sh (ATTACHKIT_CONSUMER_TEST=1): it compiles the library"))
struct ConsumerPackageTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

  @Test("the README's consumer package builds by path and attachment(for: URL) answers the sample JPEG")
  func readmeConsumer() async throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
      try Skips.skipRest("python3 is not installed (it serves the samples on loopback)")
    }
    // Spawned and waited for with waitpid (CleanSpawn): under Foundation's Process the script's
    // end went unseen once (its bash a zombie for 10 min) after swift build's many children.
    let scratch = try Scratch()
    defer { scratch.remove() }
    let log = scratch.path + "/consumer.log"
    let descriptor = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    try #require(descriptor >= 0)
    let status = await onOwnThread { () -> Int32 in
      defer { close(descriptor) }
      guard
        case .success(let pid) = CleanSpawn.start(
          ["/bin/bash", Self.root + "/scripts/consumer-test.sh"], output: descriptor, mergeErrors: true)
      else { return 127 }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      return status
    }
    let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    #expect(status == 0, "\(output.suffix(3000))")
    #expect(output.contains("\npublic.jpeg /"), "\(output.suffix(3000))")
    #expect(output.contains("consumer-test: passed"), "\(output.suffix(3000))")
  }
}
