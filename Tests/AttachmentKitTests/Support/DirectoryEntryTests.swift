import Glibc
import Testing

@testable import AttachmentKit

/// Directory entries read within their own records: glibc's records are `d_reclen` bytes long,
/// and copying `d_name` as the declared 256 bytes read past a full buffer's end.
@Suite("Directory entries")
struct DirectoryEntryTests {
  @Test("a record that ends where the next page is unmapped is read to its NUL, never past it")
  func recordAtAGuardPage() throws {
    // Given two pages, the second one inaccessible, and a 24-byte record for "42" that ends
    // exactly where the first page does (as the last record of a full readdir buffer can)
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let mapped = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    let base = try #require(mapped == MAP_FAILED ? nil : mapped)
    defer { munmap(base, 2 * page) }
    #expect(mprotect(base + page, page, PROT_NONE) == 0)
    let record = base + page - 24
    memset(record, 0, 24)
    record.storeBytes(
      of: 24, toByteOffset: MemoryLayout<dirent>.offset(of: \dirent.d_reclen) ?? 16, as: UInt16.self)
    let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
    for (index, byte) in Array("42".utf8).enumerated() {
      record.storeBytes(of: byte, toByteOffset: nameOffset + index, as: UInt8.self)
    }

    // Then its name reads as "42" (a copy of the whole d_name would fault on the guard page)
    #expect(DirectoryEntry.name(record.assumingMemoryBound(to: dirent.self)) == "42")
  }

  @Test("a directory of 1,500 entries lists every name once, none cut or padded")
  func manyEntries() throws {
    let scratch = try ScratchDirectory("dirent")
    defer { scratch.remove() }
    let directory = scratch.path
    let expected = Set((0..<1_500).map { "entry-\($0)-" + String(repeating: "x", count: $0 % 40) })
    for name in expected {
      let descriptor = open(directory + "/" + name, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
      try #require(descriptor >= 0)
      close(descriptor)
    }
    let names = FileSystem.names(in: directory)
    #expect(names.count == expected.count)
    #expect(Set(names) == expected)
  }
}
