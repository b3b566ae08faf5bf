import Glibc

/// Opens and checks files under the cache directory without trusting it: no open follows a
/// symbolic link (`O_NOFOLLOW`), records open `O_NONBLOCK` (a FIFO cannot stall a lookup),
/// and anything that is not a regular file or directory owned by this user is damage.
enum CacheFiles {
  /// This process's real user id, asked once (every check compares against it): from the
  /// auxiliary vector the kernel gave the process (no system call), else `getuid`.
  static let userID: uid_t = {
    errno = 0
    let fromKernel = auxiliaryValue(11)  // AT_UID
    return fromKernel == 0 && errno == ENOENT ? getuid() : uid_t(fromKernel)
  }()

  /// What is at a name inside the cache.
  enum Found: Equatable {
    /// Nothing.
    case missing
    /// A regular file owned by this user, with its size (bytes) and modification time
    /// (seconds since 1970).
    case file(size: Int64, modified: Double)
    /// A symbolic link, FIFO, device, socket, directory or another user's file.
    case damaged
  }

  /// Why a directory is unsafe (`nil` when it is a directory owned by this user and not
  /// writable by others; group write is refused too unless `groupWritableAllowed`).
  static func directoryProblem(_ info: stat, groupWritableAllowed: Bool) -> String? {
    if info.st_mode & S_IFMT == S_IFLNK { return "is a symbolic link; refusing to use it" }
    if info.st_mode & S_IFMT != S_IFDIR { return "is not a directory" }
    if info.st_uid != userID { return "belongs to another user (uid \(info.st_uid))" }
    if info.st_mode & S_IWOTH != 0 { return "is writable by everyone; refusing to use it" }
    if !groupWritableAllowed, info.st_mode & S_IWGRP != 0 {
      return "is writable by its group; refusing to use it"
    }
    return nil
  }

  /// Opens a directory of the cache for `*at` calls, or returns `nil` when it is missing or
  /// unsafe (a symbolic link, another user's, writable by others).
  static func openDirectory(_ path: String) -> Int32? {
    let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    var info = stat()
    guard fstat(fd, &info) == 0, directoryProblem(info, groupWritableAllowed: false) == nil else {
      close(fd)
      return nil
    }
    return fd
  }

  /// The names in an open directory (without `.` and `..`), read through a duplicate of
  /// `directory` so the caller's descriptor stays open; `[]` when it cannot be read.
  static func names(in directory: Int32) -> [String] {
    let copy = fcntl(directory, F_DUPFD_CLOEXEC, 0)
    guard copy >= 0 else { return [] }
    guard let handle = fdopendir(copy) else {
      close(copy)
      return []
    }
    defer { closedir(handle) }
    return FileSystem.names(from: handle)
  }

  /// The names in a cache directory opened without following links, or `[]` when it is
  /// missing or unsafe.
  static func names(inDirectory path: String) -> [String] {
    withDirectory(path) { names(in: $0) } ?? []
  }

  /// Runs `body` with the directory open, or returns `nil` when it is missing or unsafe.
  static func withDirectory<T>(_ path: String, _ body: (Int32) -> T?) -> T? {
    guard let fd = openDirectory(path) else { return nil }
    defer { close(fd) }
    return body(fd)
  }

  /// What is at `name` in the directory `directory` (never follows a link).
  static func find(_ name: String, in directory: Int32) -> Found {
    var info = stat()
    guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
      return errno == ENOENT ? .missing : .damaged
    }
    return classify(info)
  }

  /// What is at `path` (never follows a link in its last component).
  static func find(path: String) -> Found {
    var info = stat()
    guard lstat(path, &info) == 0 else { return errno == ENOENT ? .missing : .damaged }
    return classify(info)
  }

  static func classify(_ info: stat) -> Found {
    guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == userID else { return .damaged }
    let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    return .file(size: Int64(info.st_size), modified: modified)
  }

  /// Removes a file or a whole tree without following any symbolic link. Returns how many
  /// entries were removed.
  @discardableResult
  static func removeTree(_ path: String) -> Int {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0 }
    if info.st_mode & S_IFMT != S_IFDIR { return unlink(path) == 0 ? 1 : 0 }
    var removed = 0
    for name in FileSystem.names(in: path) { removed += removeTree("\(path)/\(name)") }
    return rmdir(path) == 0 ? removed + 1 : removed
  }

  /// Sets a file's modification time to exactly `seconds` since 1970 (never follows a link).
  static func setModified(_ path: String, to seconds: Double) {
    let omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)  // UTIME_OMIT: keep the access time
    let times = [omit, timespec(seconds)]
    utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW)
  }
}

extension timespec {
  /// A timespec of `seconds` since 1970.
  init(_ seconds: Double) {
    let whole = seconds.rounded(.down)
    self.init(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
  }
}

/// glibc's `getauxval(3)` (in `<sys/auxv.h>`, which the Glibc module does not export): a value
/// of the auxiliary vector the kernel passed the process, read from memory.
@_silgen_name("getauxval")
private func auxiliaryValue(_ type: UInt) -> UInt
