import TestTraits
import Testing

@testable import AttachmentKit

#if canImport(Glibc)
  import Glibc
#endif

/// The digest a check takes from its own reads: whatever order the reads come in, the answer
/// is the SHA-256 of the whole file, and bytes read in order are not read again.
@Suite("Read-along digest", .cpuBound)
struct ReadAlongDigestTests {
  /// Reads `ranges` (offset, length) of a file through a digesting `FileBytes`, then finishes
  /// the digest; returns it with the oracle's answer.
  private static func digest(count: Int, reads ranges: [(Int, Int)]) async throws -> (String?, String) {
    let scratch = try ScratchDirectory("read-along")
    defer { scratch.remove() }
    let body = testBytes(count: count, seed: UInt64(count))
    let path = try FileBytesTests.temporaryFile(body)
    defer { unlink(path) }
    let file = try FileBytes(path: path, digesting: true)
    for (offset, length) in ranges {
      _ = file.bytes(at: Int64(offset), count: length)
    }
    let digest = try #require(file.digest)
    return (digest.finish(reading: file), try await sha256sum(body, in: scratch.path))
  }

  @Test(
    "in order, with gaps, backwards, overlapping, past the end or not at all: always the whole file's digest",
    arguments: [
      [(0, 100_000)],  // a walk that reads everything
      [(0, 10), (0, 4_096), (4_096, 60_000)],  // a head, the window again, then on
      [(0, 10), (50_000, 100)],  // a jump ahead (an MP4 skipping mdat)
      [(90_000, 100), (0, 10)],  // the end first (an ID3v1 tag), then the start
      [(0, 1_000), (500, 2_000), (2_400, 10)],  // overlapping reads
      [(99_990, 1_000)],  // a read running past the end
      [],  // nothing read: all of it is read at the end
    ] as [[(Int, Int)]])
  func wholeFile(reads: [(Int, Int)]) async throws {
    let (digest, oracle) = try await Self.digest(count: 100_000, reads: reads)
    #expect(digest == oracle)
  }

  @Test("bytes read in order are hashed as they pass: a file read whole needs no second read")
  func readOnce() async throws {
    let body = testBytes(count: 300_000, seed: 7)
    let path = try FileBytesTests.temporaryFile(body)
    defer { unlink(path) }
    let file = try FileBytes(path: path, digesting: true)
    var offset = 0
    while offset < body.count {
      _ = file.bytes(at: Int64(offset), count: 65_536)
      offset += 65_536
    }
    // Truncating the file now would make any further read fail: the digest must not need one.
    #expect(truncate(path, 0) == 0)
    let scratch = try ScratchDirectory("read-along-once")
    defer { scratch.remove() }
    let oracle = try await sha256sum(body, in: scratch.path)
    #expect(try #require(file.digest).finish(reading: file) == oracle)
  }

  @Test("a file cut short before the digest finished gives no digest, never a wrong one")
  func cutShort() throws {
    let body = testBytes(count: 300_000, seed: 8)
    let path = try FileBytesTests.temporaryFile(body)
    defer { unlink(path) }
    let file = try FileBytes(path: path, digesting: true)
    _ = file.bytes(at: 0, count: 1_000)
    #expect(truncate(path, 100_000) == 0)
    #expect(try #require(file.digest).finish(reading: file) == nil)
  }

  @Test("a file opened without digesting has no digest")
  func notAsked() throws {
    let path = try FileBytesTests.temporaryFile([1, 2, 3])
    defer { unlink(path) }
    #expect(try FileBytes(path: path).digest == nil)
  }
}
