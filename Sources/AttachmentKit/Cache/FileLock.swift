import Glibc

/// An advisory lock on a file (`flock`), shared by every process using one cache directory,
/// and a mutex for the threads of this process (`flock` does not exclude threads sharing one
/// open file). Publishes, record writes and each slice of a sweep take it exclusively; reads
/// take none, and a hit only ever tries it (``withExclusiveLockIfFree(_:)``), so a hit never
/// waits. The lock file is opened once, on first use, and kept open.
final class FileLock: @unchecked Sendable {
  /// The lock file's path.
  let path: String
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  /// The open lock file, or -1 before first use. Guarded by `mutex`.
  private var descriptor: Int32 = -1

  /// Makes a lock on the file at `path` (created 0600 on first use).
  init(path: String) {
    self.path = path
    mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Runs `body` holding the lock exclusively. Waits for other holders. `body` must not take
  /// the lock again.
  /// - Throws: `io_error` when the lock file cannot be opened or locked, or whatever `body` throws.
  func withExclusiveLock<T>(_ body: () throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    try withExclusiveLockedFile { _ throws(AttachmentError) -> T in try body() }
  }

  /// Runs `body` holding the lock exclusively, with the lock file's descriptor (the cache
  /// keeps its size ledger in the file's first bytes, see ``CacheLedger``). Waits for other
  /// holders. `body` must not take the lock again nor close the descriptor.
  /// - Throws: `io_error` when the lock file cannot be opened or locked, or whatever `body` throws.
  func withExclusiveLockedFile<T>(_ body: (Int32) throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    let fd = try openLockFile()
    while flock(fd, LOCK_EX) != 0 {
      if errno != EINTR {
        throw AttachmentError(.ioError, "Cannot lock the cache: \(String(cString: strerror(errno))).")
      }
    }
    defer { flock(fd, LOCK_UN) }
    return try body(fd)
  }

  /// Runs `body` holding the lock exclusively if nobody (no thread, no process) holds it now;
  /// returns `nil` at once, without running `body`, when it is busy or cannot be opened.
  func withExclusiveLockIfFree<T>(_ body: () -> T) -> T? {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    guard let fd = try? openLockFile() else { return nil }
    while flock(fd, LOCK_EX | LOCK_NB) != 0 {
      if errno != EINTR { return nil }
    }
    defer { flock(fd, LOCK_UN) }
    return body()
  }

  /// The open lock file (mutex held).
  private func openLockFile() throws(AttachmentError) -> Int32 {
    if descriptor >= 0 { return descriptor }
    let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw AttachmentError(
        .ioError, "Cannot open the cache lock \(path): \(String(cString: strerror(errno))).")
    }
    descriptor = fd
    return fd
  }
}
