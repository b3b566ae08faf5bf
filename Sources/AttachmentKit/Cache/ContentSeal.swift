import Glibc

/// What a content file looked like when its record was written: its inode and its change time
/// (`st_ctim`, to the nanosecond). A hit compares them with the file's `lstat`, which it makes
/// anyway, so damage that a write caused is caught at no cost: every write, truncation, `chmod`,
/// `utimes` (a restored modification time included) or replacement of the file changes one of
/// the two, and no program can set a change time. A hit whose seal differs re-hashes the file
/// before serving it (see ``AttachmentCache/entry(for:)``). Not caught: bits that change on the
/// medium without a write through the file system; `attachkit cache verify` re-hashes every
/// file for those.
struct ContentSeal: Equatable, Sendable {
  /// The file's inode number.
  let inode: UInt64
  /// The change time, in whole seconds since 1970.
  let seconds: Int
  /// The change time's nanoseconds.
  let nanoseconds: Int

  /// The seal of a file's `stat`.
  init(_ info: stat) {
    inode = UInt64(info.st_ino)
    seconds = Int(info.st_ctim.tv_sec)
    nanoseconds = Int(info.st_ctim.tv_nsec)
  }

  /// The seal of the file at `path` now (never follows a link), or `nil` when it cannot be read.
  init?(path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    self.init(info)
  }

  /// Parses a record's `seal` value (`INODE SECONDS NANOSECONDS`), or `nil` when malformed.
  init?(recorded text: Substring) {
    let parts = text.split(separator: " ")
    guard parts.count == 3, let inode = UInt64(parts[0]), let seconds = Int(parts[1]),
      let nanoseconds = Int(parts[2]), (0..<1_000_000_000).contains(nanoseconds)
    else { return nil }
    self.inode = inode
    self.seconds = seconds
    self.nanoseconds = nanoseconds
  }

  /// The record's `seal` value.
  var recorded: String { "\(inode) \(seconds) \(nanoseconds)" }
}
