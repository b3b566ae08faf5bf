import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// A full disk fails the store cleanly and the cache works again once space is freed.
@Suite(
  "Disk full",
  .requires(
    TmpfsMount.isAvailable, "DiskFullTests",
    "a tmpfs cannot be mounted here (needs root or CAP_SYS_ADMIN); the disk-full path is then untested"
  ), .threadOfItsOwn)
struct DiskFullTests {

  /// The bytes in use on the file system at `path` (statvfs), or `Int.max` when it cannot say.
  static func usedBytes(_ path: String) -> Int {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return .max }
    return Int(info.f_blocks - info.f_bfree) * Int(info.f_frsize)
  }

  /// A valid 16-bit mono PCM WAV of `dataBytes` bytes of samples.
  static func wav(dataBytes: Int) -> [UInt8] {
    func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    func le16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8((value >> (8 * $0)) & 0xFF) } }
    var bytes = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVEfmt ".utf8)
    bytes += le32(16) + le16(1) + le16(1) + le32(8000) + le32(16000) + le16(2) + le16(16)
    bytes += Array("data".utf8) + le32(dataBytes)
    bytes += testBytes(count: dataBytes, seed: UInt64(dataBytes))
    return bytes
  }

  @Test("on a full tmpfs a fetch fails with io_error, leaves no temp file, and works after space is freed")
  func diskFull() async throws {
    // Given a cache on a 1 MiB tmpfs (skipped where mounting is not allowed)
    let scratch = try ScratchDirectory("diskfull")
    defer { scratch.remove() }
    let mountPoint = scratch.path + "/small"
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    try await TmpfsMount.with(at: mountPoint, options: "size=1m,mode=0700") {
      let server = try TestHTTPServer.start()
      defer { server.stop() }
      server.serve("/big.wav", body: Self.wav(dataBytes: 2_000_000), contentType: "audio/wav")
      server.serve("/small.wav", body: Self.wav(dataBytes: 100_000), contentType: "audio/wav")
      var configuration = PipelineConfiguration(cacheDirectory: mountPoint + "/cache")
      configuration.downloader.allowPrivateNetworks = true
      let pipeline = try AttachmentPipeline(configuration: configuration)
      let usedBefore = Self.usedBytes(mountPoint)

      // When a body larger than the disk arrives
      do {
        _ = try await pipeline.attachment(for: server.url("/big.wav"), timeout: generousTimeout)
        Issue.record("expected io_error")
      } catch {
        // Then it fails with io_error and leaves nothing behind
        #expect((error as? AttachmentError)?.code == .ioError, "\(error)")
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint + "/cache/v3/tmp").isEmpty)
      // (the body is an O_TMPFILE, which no listing shows: the file system's used blocks do,
      // until its last descriptor closes; the downloader's closes just after the answer)
      let freed = ContinuousClock.now + .seconds(5)
      while Self.usedBytes(mountPoint) > usedBefore, ContinuousClock.now < freed {
        try await Task.sleep(for: .milliseconds(5))
      }
      #expect(Self.usedBytes(mountPoint) <= usedBefore, "the refused body's blocks are still in use")

      // And with the space back, the cache works
      let small = try await pipeline.attachment(for: server.url("/small.wav"), timeout: generousTimeout)
      #expect(small.source == .network)
      let again = try await pipeline.attachment(for: server.url("/small.wav"), timeout: generousTimeout)
      #expect(again.source == .cache)
      #expect(try pipeline.cache.verify().corrupt == 0)
    }
  }
}

/// Whether tmpfs mounts work here (the disk-full test needs one).
enum TmpfsMount {
  /// Whether this process can mount (and unmount) a tmpfs: tried once, so the suite is
  /// skipped with its reason where it cannot, instead of failing.
  static let isAvailable: Bool = {
    guard let scratch = try? ScratchDirectory("mountcheck") else { return false }
    defer { scratch.remove() }
    guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", scratch.path]) == 0 else {
      return false
    }
    return run("/bin/umount", [scratch.path]) == 0
  }()

  /// Mounts a tmpfs with `options` at `mountPoint`, runs `body`, and unmounts it before
  /// returning or rethrowing; `mount` and `umount` are waited for on a thread of their own.
  static func with(at mountPoint: String, options: String, _ body: () async throws -> Void) async throws {
    let mounted = await onOwnThread {
      run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", mountPoint])
    }
    try #require(mounted == 0, "cannot mount a tmpfs here (needs root)")
    let result: Result<Void, any Error>
    do {
      try await body()
      result = .success(())
    } catch {
      result = .failure(error)
    }
    _ = await onOwnThread { run("/bin/umount", [mountPoint]) }
    try result.get()
  }

  /// Runs a program and returns its exit status (-1 when it cannot start). It blocks until
  /// the program exits.
  static func run(_ program: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    guard (try? process.runClosingChildEnds()) != nil else { return -1 }
    process.blockUntilExit()
    process.closeStandardPipes()
    return process.terminationStatus
  }
}
