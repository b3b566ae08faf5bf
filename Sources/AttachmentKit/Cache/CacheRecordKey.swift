import Glibc

/// The secret that names a cache's index records: 16 random bytes in `ROOT/v2/key` (0600),
/// made by the first process that opens the cache and read by every later one.
///
/// A record's file name is the keyed SipHash-2-4-128 of its normalized URL (``SipHash128``), so
/// no one without the key can build two URLs whose records share a name and evict or overwrite
/// each other (with the unkeyed FNV-1a of earlier versions anyone could). The record still holds
/// its URL, which every read checks. Records named by another key (a cache from before keys,
/// or a key file that was replaced) are misses, and the next sweep removes them: their names
/// are not their URLs' names.
struct CacheRecordKey: Sendable {
  private let hash: SipHash128

  /// The record file name of a URL key: 32 lower-case hex digits.
  func name(for key: URLKey) -> String { hash.hex(key.normalized.utf8) }

  /// Reads the cache's key, making it when there is none (linked into place under the cache's
  /// lock, so two processes opening a new cache at once agree on one), and replacing one that
  /// is damaged (not a regular file of this user of 16 bytes).
  /// - Throws: `io_error` when the key cannot be read or written.
  static func load(_ layout: CacheLayout, lock: FileLock, durable: Bool) throws(AttachmentError)
    -> CacheRecordKey
  {
    if let key = read(layout.keyFile) { return key }
    return try lock.withExclusiveLock { () throws(AttachmentError) -> CacheRecordKey in
      if let key = read(layout.keyFile) { return key }
      try write(layout, durable: durable)
      guard let key = read(layout.keyFile) else {
        throw AttachmentError(.ioError, "Cannot read the cache key \(layout.keyFile) just written.")
      }
      return key
    }
  }

  /// Writes 16 random bytes into a new file and links it to the key's name (a damaged key is
  /// renamed over instead). Lock held.
  private static func write(_ layout: CacheLayout, durable: Bool) throws(AttachmentError) {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let (temporary, fd) = try TemporaryFile.create(in: layout.temporary)
    defer { unlink(temporary) }
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    let synced = !durable || fsync(fd) == 0
    close(fd)
    guard written == 16, synced else {
      throw AttachmentError(.ioError, "Cannot write the cache key: \(String(cString: strerror(errno))).")
    }
    if link(temporary, layout.keyFile) == 0 || (errno == EEXIST && rename(temporary, layout.keyFile) == 0) {
      if durable { FileSystem.syncDirectory(of: layout.keyFile) }
      return
    }
    throw AttachmentError(
      .ioError, "Cannot create the cache key \(layout.keyFile): \(String(cString: strerror(errno))).")
  }

  /// The key in `path`, or `nil` when it is missing or not a regular file of this user of
  /// exactly 16 bytes (never follows a link; a FIFO cannot stall the read).
  private static func read(_ path: String) -> CacheRecordKey? {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == CacheFiles.userID,
      info.st_size == 16
    else { return nil }
    var bytes = [UInt8](repeating: 0, count: 17)
    let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 17, 0) }
    guard count == 16, let hash = SipHash128(key: Array(bytes.prefix(16))) else { return nil }
    return CacheRecordKey(hash: hash)
  }
}
