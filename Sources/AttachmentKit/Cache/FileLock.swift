import Glibc

/// An advisory lock on a file (`flock`), shared by every process using one cache directory.
/// Index writes and sweeps take it exclusively; reads of immutable content need none.
struct FileLock: Sendable {
  /// The lock file's path.
  let path: String

  /// Runs `body` holding the lock exclusively. Waits for other holders.
  /// - Throws: `io_error` when the lock file cannot be opened or locked, or whatever `body` throws.
  func withExclusiveLock<T>(_ body: () throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw AttachmentError(
        .ioError, "Cannot open the cache lock \(path): \(String(cString: strerror(errno))).")
    }
    defer { close(fd) }  // closing releases the lock
    while flock(fd, LOCK_EX) != 0 {
      if errno != EINTR {
        throw AttachmentError(.ioError, "Cannot lock the cache: \(String(cString: strerror(errno))).")
      }
    }
    return try body()
  }
}
