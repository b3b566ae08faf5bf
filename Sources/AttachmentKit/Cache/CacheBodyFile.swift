import Glibc

/// The file a download writes its body into, on the cache's file system, until the cache
/// publishes it or it is discarded.
///
/// Preferably an anonymous `O_TMPFILE` (no name, so a crash leaves nothing to clean and a
/// publish is one `linkat`); where the file system lacks `O_TMPFILE`, a named file in
/// `tmp/` that its writer holds an exclusive `flock` on for as long as it exists: a named
/// body file whose lock can be taken has no writer any more and is removed by sweeps. No
/// process id is involved, so ownership holds across PID namespaces and PID reuse.
struct CacheBodyFile: Sendable {
  /// The name prefix of named body files.
  static let prefix = ".body-"
  /// The suffix of a named body file that is locked by its writer.
  static let lockedSuffix = ".part"
  /// The suffix of a named body file just created, before its lock is taken (renamed to
  /// ``lockedSuffix`` once locked; one left by a crash is removed after an hour).
  static let newSuffix = ".new"

  /// The cache's own descriptor (read-write); for a named file it holds the ownership lock.
  let descriptor: Int32
  /// A path that opens the file: `/proc/self/fd/N` for an anonymous file, else its name.
  let path: String
  /// Whether the file has no name (`O_TMPFILE`).
  let isAnonymous: Bool

  /// Makes a body file in `directory`: anonymous when `anonymous` and the file system
  /// supports it, else named and locked.
  /// - Returns: the file, and whether an anonymous file was refused by the file system.
  /// - Throws: `io_error` when no file can be created (disk full, permissions).
  static func make(in directory: String, anonymous: Bool) throws(AttachmentError) -> (CacheBodyFile, Bool) {
    if anonymous, procSelfFD {
      let fd = open(directory, oTemporaryFile | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if fd >= 0 {
        return (CacheBodyFile(descriptor: fd, path: "/proc/self/fd/\(fd)", isAnonymous: true), false)
      }
      guard [EOPNOTSUPP, EISDIR, EINVAL].contains(errno) else {
        throw AttachmentError(
          .ioError, "Cannot create a body file in \(directory): \(String(cString: strerror(errno))).")
      }
      return (try makeNamed(in: directory), true)
    }
    return (try makeNamed(in: directory), false)
  }

  /// Whether `/proc/self/fd` exists (anonymous files are linked through it), asked once per
  /// process rather than once per body file.
  static let procSelfFD = access("/proc/self/fd", F_OK) == 0

  /// `O_TMPFILE` (Linux: `__O_TMPFILE | O_DIRECTORY`), which Glibc's module does not export.
  static let oTemporaryFile: Int32 = 0o20_000_000 | O_DIRECTORY

  private static func makeNamed(in directory: String) throws(AttachmentError) -> CacheBodyFile {
    for _ in 0..<16 {
      let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)
      let fresh = "\(directory)/\(prefix)\(token)\(newSuffix)"
      let fd = open(fresh, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if fd < 0 {
        if errno == EEXIST || errno == EINTR { continue }
        throw AttachmentError(
          .ioError, "Cannot create a body file in \(directory): \(String(cString: strerror(errno))).")
      }
      let locked = "\(directory)/\(prefix)\(token)\(lockedSuffix)"
      guard flock(fd, LOCK_EX | LOCK_NB) == 0, rename(fresh, locked) == 0 else {
        let reason = String(cString: strerror(errno))
        unlink(fresh)
        close(fd)
        throw AttachmentError(.ioError, "Cannot lock a body file in \(directory): \(reason).")
      }
      return CacheBodyFile(descriptor: fd, path: locked, isAnonymous: false)
    }
    throw AttachmentError(.ioError, "Cannot find a free body file name in \(directory).")
  }

  /// The file as a download's target (``DownloadRequest/bodyFile``): its path, and a duplicate
  /// of its descriptor that the transfer takes over and closes, while this file keeps its own
  /// (and, for a named file, its lock). The only place the descriptor is duplicated.
  /// - Throws: `io_error` when the process is out of descriptors.
  func transferTarget() throws(AttachmentError) -> (path: String, descriptor: Int32) {
    let duplicate = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
    guard duplicate >= 0 else {
      throw AttachmentError(
        .ioError, "Cannot hand the body file to the transfer: \(String(cString: strerror(errno))).")
    }
    return (path, duplicate)
  }

  /// Removes the file (a named one is unlinked while still locked) and closes it.
  func discard() {
    if !isAnonymous { unlink(path) }
    close(descriptor)
  }

  /// Whether a named body file in a sweep is abandoned: a `.part` file whose lock can be
  /// taken, or a `.new` file older than an hour. The lock is released again at once.
  static func isAbandoned(name: String, in directory: String, now: Double) -> Bool {
    guard name.hasPrefix(prefix) || name.hasPrefix(TemporaryFile.prefix) else { return false }
    let path = "\(directory)/\(name)"
    if name.hasSuffix(newSuffix) {
      if case .file(_, let modified) = CacheFiles.find(path: path) { return now - modified > 3_600 }
      return true
    }
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return errno != ENOENT }
    defer { close(fd) }
    return flock(fd, LOCK_EX | LOCK_NB) == 0
  }
}
