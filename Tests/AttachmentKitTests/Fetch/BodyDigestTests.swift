import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// The body's SHA-256 while it is written: inline for small bodies, read back on a background
/// queue past 1 MiB, the same digest either way. Each test runs on its own thread, as the engine
/// thread would (its waits must not hold Swift's cooperative threads other tests resume on).
@Suite("Body digest", .cpuBound)
struct BodyDigestTests {
  /// Writes `body` in `chunk`-byte pieces through a descriptor, as the transfer does, feeding
  /// each piece to a digest; returns the digest's answer and whether it left the engine thread.
  private static func digest(
    of body: [UInt8], chunk: Int, descriptor: Int32, leavingSmallBody: Bool = false,
    beforeFinalize: () -> Void = {}
  ) -> (String?, Bool) {
    let digest = BodyDigest(writer: descriptor, leavingSmallBodyToCaller: leavingSmallBody)
    var offset = 0
    while offset < body.count {
      let end = min(body.count, offset + chunk)
      body[offset..<end].withUnsafeBytes { piece in
        _ = write(descriptor, piece.baseAddress, piece.count)
        digest.append(piece, writtenTotal: Int64(end))
      }
      offset = end
    }
    beforeFinalize()
    if digest.isLeftToCaller { return (nil, false) }
    let result = digest.finalize(total: Int64(body.count))
    return (result, digest.isOffloaded)
  }

  @Test(
    "small and large bodies, in even and odd chunk sizes, match sha256sum",
    arguments: [
      (1000, 1000), (1 << 20, 65_536), ((1 << 20) + 1, 65_536), (5 << 20, 16_384), (3_000_017, 99_991),
    ])
  func matchesOracle(size: Int, chunk: Int) async throws {
    try await onOwnThread { try Self.matchesOracle(size: size, chunk: chunk) }
  }

  private static func matchesOracle(size: Int, chunk: Int) throws {
    let scratch = try ScratchDirectory("digest")
    defer { scratch.remove() }
    let body = testBytes(count: size, seed: UInt64(size))
    let (path, descriptor) = try TemporaryFile.create(in: scratch.path)
    defer {
      close(descriptor)
      unlink(path)
    }
    let (digest, offloaded) = Self.digest(of: body, chunk: chunk, descriptor: descriptor)
    #expect(digest == (try blockingSHA256sum(body, in: scratch.path)))
    #expect(offloaded == (size > BodyDigest.inlineBytes), "hashing left the engine thread only past 1 MiB")
  }

  @Test(
    "left to the caller, a small body is not hashed at all and a large one is read back from its start",
    arguments: [1000, 1 << 20, (1 << 20) + 1, 3_000_017])
  func leftToCaller(size: Int) async throws {
    try await onOwnThread { try Self.leftToCaller(size: size) }
  }

  private static func leftToCaller(size: Int) throws {
    let scratch = try ScratchDirectory("digest-left")
    defer { scratch.remove() }
    let body = testBytes(count: size, seed: UInt64(size) &+ 1)
    let (path, descriptor) = try TemporaryFile.create(in: scratch.path)
    defer {
      close(descriptor)
      unlink(path)
    }
    let (digest, offloaded) = Self.digest(
      of: body, chunk: 65_536, descriptor: descriptor, leavingSmallBody: true)
    if size <= BodyDigest.inlineBytes {
      #expect(digest == nil && !offloaded, "a small body stays unhashed on the engine thread")
    } else {
      #expect(offloaded)
      #expect(digest == (try blockingSHA256sum(body, in: scratch.path)), "the job hashed the first MiB too")
    }
  }

  @Test("a nameless O_TMPFILE body is read back through /proc and hashed right")
  func anonymousFile() async throws {
    try await onOwnThread { try Self.anonymousFile() }
  }

  private static func anonymousFile() throws {
    let scratch = try ScratchDirectory("digest-tmpfile")
    defer { scratch.remove() }
    let oTmpfile: Int32 = 0o20_200_000  // O_TMPFILE (__O_TMPFILE | O_DIRECTORY); Glibc does not import it
    let descriptor = open(scratch.path, oTmpfile | O_WRONLY | O_CLOEXEC, 0o600)
    try #require(descriptor >= 0, "the file system has no O_TMPFILE")
    defer { close(descriptor) }
    let body = testBytes(count: 3 << 20, seed: 3)
    let (digest, offloaded) = Self.digest(of: body, chunk: 65_536, descriptor: descriptor)
    #expect(offloaded)
    #expect(digest == (try blockingSHA256sum(body, in: scratch.path)))
  }

  @Test("a body cut short under the reader gives no digest rather than a wrong one")
  func shortReadFails() async throws {
    try await onOwnThread { try Self.shortReadFails() }
  }

  private static func shortReadFails() throws {
    let scratch = try ScratchDirectory("digest-short")
    defer { scratch.remove() }
    let (path, descriptor) = try TemporaryFile.create(in: scratch.path)
    defer {
      close(descriptor)
      unlink(path)
    }
    // The background job reads whole 256 KiB pieces only, so a tail shorter than a piece is
    // always read by finalize itself: cutting the file inside that tail is a short read on the
    // caller's side every time, whatever the job had done by then.
    let wholePieces = 4 << 20
    let body = testBytes(count: wholePieces + 100_000, seed: 4)
    let (digest, offloaded) = Self.digest(of: body, chunk: 65_536, descriptor: descriptor) {
      _ = ftruncate(descriptor, off_t(wholePieces + 50_000))  // something else cut the file
    }
    #expect(offloaded)
    #expect(digest == nil, "a short read gives no digest, never the digest of other bytes")
  }
}
