import Glibc

/// An advisory lock on a file (`flock`), shared by every process using one cache directory.
/// Publishes, record writes and each slice of a sweep take it exclusively; reads take none,
/// and a hit only ever tries it (``withExclusiveLockIfFree(_:)``), so a hit never waits.
struct FileLock: Sendable {
  /// The lock file's path.
  let path: String

  /// Runs `body` holding the lock exclusively. Waits for other holders.
  /// - Throws: `io_error` when the lock file cannot be opened or locked, or whatever `body` throws.
  func withExclusiveLock<T>(_ body: () throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    let fd = try openLockFile()
    defer { close(fd) }  // closing releases the lock
    while flock(fd, LOCK_EX) != 0 {
      if errno != EINTR {
        throw AttachmentError(.ioError, "Cannot lock the cache: \(String(cString: strerror(errno))).")
      }
    }
    return try body()
  }

  /// Runs `body` holding the lock exclusively if nobody holds it now; returns `nil` at once
  /// (without running `body`) when the lock is busy or cannot be opened.
  func withExclusiveLockIfFree<T>(_ body: () -> T) -> T? {
    guard let fd = try? openLockFile() else { return nil }
    defer { close(fd) }
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      if errno != EINTR { return nil }
    }
    return body()
  }

  private func openLockFile() throws(AttachmentError) -> Int32 {
    let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw AttachmentError(
        .ioError, "Cannot open the cache lock \(path): \(String(cString: strerror(errno))).")
    }
    return fd
  }
}
