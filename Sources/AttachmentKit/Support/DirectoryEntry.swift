import Glibc

/// The name of an entry `readdir(3)` returned, read within the entry's own record.
///
/// glibc returns records only `d_reclen` bytes long inside its buffer, while `struct dirent`
/// declares `d_name` as 256 bytes: reading `entry.pointee.d_name` copies all 256, past the end of
/// the buffer for the last record of a full one, and a process listing a directory of more than
/// about 1,300 entries (`/proc/self/fd` of a busy `attachkit serve`) could read an unmapped page
/// and die (the bug fixed in swift-corelibs-foundation#5472). This reads the bytes of the name
/// only, up to its NUL within the record.
package enum DirectoryEntry {
  /// Where `d_name` starts in a record.
  private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
  /// Where `d_reclen` is in a record.
  private static let lengthOffset = MemoryLayout<dirent>.offset(of: \dirent.d_reclen) ?? 16

  /// The entry's name (`"."`, `"12"`, `"ab"`), never reading past its record.
  package static func name(_ entry: UnsafeMutablePointer<dirent>) -> String {
    let record = UnsafeRawPointer(entry)
    let recordLength = Int(record.loadUnaligned(fromByteOffset: lengthOffset, as: UInt16.self))
    let capacity = max(0, min(recordLength, MemoryLayout<dirent>.size) - nameOffset)
    let bytes = UnsafeBufferPointer(
      start: (record + nameOffset).assumingMemoryBound(to: UInt8.self), count: capacity)
    return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
  }
}
