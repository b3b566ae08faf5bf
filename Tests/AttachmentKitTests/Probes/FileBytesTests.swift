import TestTraits
import Testing

@testable import AttachmentKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `FileBytes` over a real descriptor and in memory, and `ByteReader`'s bounds and window.
@Suite(.cpuBound)
struct FileBytesTests {
  /// Writes `bytes` to a new temporary file and returns its path (the caller unlinks it).
  static func temporaryFile(_ bytes: [UInt8]) throws -> String {
    var template = Array("/tmp/probe-test-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
      guard let base = buffer.baseAddress else { return -1 }
      return mkstemp(base)
    }
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    var written = 0
    while written < bytes.count {
      let result = bytes.withUnsafeBytes { raw -> Int in
        guard let base = raw.baseAddress else { return -1 }
        return write(descriptor, base + written, bytes.count - written)
      }
      try #require(result > 0)
      written += result
    }
    return template.withUnsafeBufferPointer { buffer in
      String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
  }

  /// A pattern whose byte at `i` is `i % 251`, so misplaced reads show.
  private static func pattern(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8($0 % 251) }
  }

  /// Reads across window boundaries from a descriptor.
  @Test func readsAcrossWindowBoundariesFromADescriptor() throws {
    let bytes = Self.pattern(200_000)
    let path = try Self.temporaryFile(bytes)
    defer { unlink(path) }
    let file = try FileBytes(path: path)
    #expect(file.count == Int64(bytes.count))
    #expect(file.bytes(at: 199_990, count: 100) == Array(bytes[199_990...]))
    #expect(file.bytes(at: 5, count: 3) == Array(bytes[5..<8]))
    #expect(file.bytes(at: 200_000, count: 10).isEmpty)
    #expect(file.bytes(at: -1, count: 10).isEmpty)
    #expect(file.bytes(at: 0, count: 0).isEmpty)
    let reader = ByteReader(file)
    for offset in [0, 1, 65_533, 65_534, 65_535, 65_536, 131_070, 199_996] {
      let expected = bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
      #expect(reader.u32be(offset) == expected)
    }
    #expect(reader.u8(150_000) == bytes[150_000])
    #expect(reader.u8(10) == bytes[10])  // backwards after a forward window move
    #expect(reader.u32be(199_997) == nil)
    #expect(reader.bytes(at: 65_530, count: 12) == Array(bytes[65_530..<65_542]))
    #expect(reader.bytes(at: 0, count: ByteReader.windowSize + 1) == nil)
  }

  /// Open failures are reported, each with the system's reason for a message.
  @Test func openFailuresAreReported() throws {
    #expect(throws: FileBytesError.openFailed(errno: ENOENT)) {
      _ = try FileBytes(path: "/nonexistent/probe/file")
    }
    #expect(throws: FileBytesError.directory) {
      _ = try FileBytes(path: "/tmp")
    }
    #expect(throws: FileBytesError.notRegularFile) {
      _ = try FileBytes(path: "/dev/null")
    }
    #expect(FileBytesError.openFailed(errno: ENOENT).reason == "No such file or directory")
    #expect(FileBytesError.directory.reason == "Is a directory")
    #expect(FileBytesError.notRegularFile.reason == "Not a regular file")
  }

  /// Reader bounds never trap.
  @Test func readerBoundsNeverTrap() {
    let reader = ByteReader(bytes: [1, 2, 3, 4, 5])
    #expect(reader.u8(-1) == nil)
    #expect(reader.u8(5) == nil)
    #expect(reader.u32be(2) == nil)
    #expect(reader.u32le(1) == 0x0504_0302)
    #expect(reader.u64be(0) == nil)
    #expect(reader.bytes(at: Int.max, count: 2) == nil)
    #expect(reader.bytes(at: 2, count: -1) == nil)
    #expect(!reader.contains(Int.max, 1))
    #expect(!reader.contains(1, Int.max))
    #expect(reader.contains(5, 0))
    #expect(reader.firstIndex(of: 4, from: 0, to: Int.max) == 3)
    #expect(reader.firstIndex(of: 9, from: 0, to: 5) == nil)
    #expect(reader.firstIndex(of: 1, from: -3, to: 5) == nil)
    #expect(reader.nextStartCode(from: Int.max, to: Int.max) == nil)
  }

  /// Start code search finds codes across windows.
  @Test func startCodeSearchFindsCodesAcrossWindows() throws {
    var bytes = ProbeFixtures.fill(140_000, 0xAA)
    for at in [10, 65_534, 65_600, 131_071] { bytes.replaceSubrange(at..<(at + 3), with: [0, 0, 1]) }
    let path = try Self.temporaryFile(bytes)
    defer { unlink(path) }
    let reader = ByteReader(try FileBytes(path: path))
    var found: [Int] = []
    var position = 0
    while let next = reader.nextStartCode(from: position, to: reader.count) {
      found.append(next)
      position = next + 1
    }
    #expect(found == [10, 65_534, 65_600, 131_071])
  }

  /// Descriptor and memory give the same reports.
  @Test func descriptorAndMemoryGiveTheSameReports() throws {
    for sample in ProbeFixtures.all + [("mp3-big-tag", .mp3, ProbeFixtures.mp3(frames: 300, tag: 100_000))] {
      let path = try Self.temporaryFile(sample.bytes)
      defer { unlink(path) }
      let onDisk = try FileBytes(path: path)
      let inMemory = FileBytes(bytes: sample.bytes)
      #expect(MediaProbe.identify(file: onDisk) == MediaProbe.identify(file: inMemory), "\(sample.name)")
      #expect(MediaProbe.identify(file: onDisk)?.format == sample.format, "\(sample.name)")
      #expect(
        MediaProbe.inspect(file: onDisk, as: sample.format)
          == MediaProbe.inspect(file: inMemory, as: sample.format),
        "\(sample.name)")
    }
  }
}
