import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// `durable`: every publish reaches the disk before it is answered.
@Suite("Durable publishing", .serialized, .threadOfItsOwn)
struct DurableTests {
  /// The `fsync`/`fdatasync` calls a `prefetch` of `count` new entries makes, as strace shows
  /// them with the path of the descriptor each syncs (`-y`: `fdatasync(7</…/v3/records>)`).
  private static func syncCalls(durable: Bool, count: Int) async throws -> [Substring] {
    let scratch = try ScratchDirectory("durable")
    defer { scratch.remove() }
    let (_, _, status, lines) = try await SharedCacheTests.tracedPrefetch(
      count: count, scratch: scratch, trace: "fsync,fdatasync,syncfs,sync_file_range",
      options: durable ? ["--durable"] : [], straceOptions: ["-y"])
    #expect(status == 0)
    return lines.filter { $0.contains("fsync(") || $0.contains("fdatasync(") }
  }

  @Test("--durable syncs each new body, its record and their directories; without it nothing is synced")
  func durableSyncs() async throws {
    let count = 5
    #expect(try await Self.syncCalls(durable: false, count: count).isEmpty)
    // At least the body and the record of each entry (directories come on top)
    let synced = try await Self.syncCalls(durable: true, count: count)
    #expect(synced.count >= 2 * count, "\(synced.count) sync calls for \(count) entries")
    // and the record store itself once per published entry: each publish's commit is synced
    // before it is answered (bodies and directories alone are not a durable entry)
    let records = synced.filter { $0.contains("/v3/records>") }
    #expect(records.count >= count, "\(records.count) syncs of the records for \(count) entries: \(synced)")
  }
}

/// Runs the built `attachkit` with `arguments` under strace (following threads), tracing the
/// system calls in `trace` (with strace's `options` too, such as `-y`); returns its exit status
/// and strace's lines.
func straceAttachkit(_ trace: String, _ arguments: [String], log: String, options: [String] = []) async throws
  -> (Int32, [Substring])
{
  let strace = "/usr/bin/strace"
  try #require(
    FileManager.default.isExecutableFile(atPath: strace), "strace is missing (scripts/install-deps.sh)")
  let process = Process()
  process.executableURL = URL(fileURLWithPath: strace)
  // One log per thread (`-ff`: LOG.TID), so no call is split into "unfinished" and "resumed"
  // halves by another thread's line.
  process.arguments =
    ["-ff", "-qq", "-o", log] + options + ["-e", "trace=" + trace, CLIPath.attachkit] + arguments
  var environment = ProcessInfo.processInfo.environment
  environment["ATTACHKIT_ALLOW_PRIVATE_NETWORKS"] = "1"
  // LeakSanitizer cannot run under ptrace and fails the traced process at exit; the leak
  // check of a sanitizer build is the test run's own, not this child's.
  environment["ASAN_OPTIONS"] = (environment["ASAN_OPTIONS"].map { $0 + ":" } ?? "") + "detect_leaks=0"
  process.environment = environment
  process.standardOutput = FileHandle.nullDevice
  process.standardError = FileHandle.nullDevice
  try process.runClosingChildEnds()
  await process.exitStatus()
  let directory = (log as NSString).deletingLastPathComponent
  let prefix = (log as NSString).lastPathComponent + "."
  var lines: [Substring] = []
  for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasPrefix(prefix) {
    lines += try String(contentsOfFile: directory + "/" + name, encoding: .utf8).split(separator: "\n")
  }
  return (process.terminationStatus, lines)
}
