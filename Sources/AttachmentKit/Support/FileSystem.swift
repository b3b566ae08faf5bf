import Glibc

/// Small POSIX file helpers that need no Foundation (the hit path avoids loading it).
package enum FileSystem {
  /// The names in a directory (without `.` and `..`), or `[]` when it cannot be read.
  static func names(in directory: String) -> [String] {
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    return names(from: handle)
  }

  /// The names an open directory stream still lists (without `.` and `..`).
  static func names(from handle: OpaquePointer) -> [String] {
    var names: [String] = []
    while let entry = readdir(handle) {
      let name = DirectoryEntry.name(entry)
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// The size and modification time (seconds since 1970) of a file, or `nil` if it is missing.
  static func info(_ path: String) -> (size: Int64, modified: Double)? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return (Int64(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
  }

  /// The whole of a small file (at most `limit` bytes), or `nil`.
  package static func readSmallFile(_ path: String, limit: Int = 64 * 1024) -> [UInt8]? {
    try? smallFile(path, limit: limit).get()
  }

  /// The whole of a small file (at most `limit` bytes), or why it cannot be read: the system's
  /// reason ("No such file or directory", "Permission denied", "Is a directory"), or that it is
  /// larger than `limit`.
  package static func smallFile(_ path: String, limit: Int = 64 * 1024) -> Result<[UInt8], SmallFileFailure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(SmallFileFailure(errno: errno)) }
    defer { close(fd) }
    var info = stat()
    if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
      return .failure(SmallFileFailure(errno: EISDIR))
    }
    var buffer = [UInt8](repeating: 0, count: 4096)
    var out: [UInt8] = []
    while out.count <= limit {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return .failure(SmallFileFailure(errno: errno))
      }
      if count == 0 { return .success(out) }
      out.append(contentsOf: buffer[0..<count])
    }
    return .failure(SmallFileFailure(reason: "it is larger than \(limit) bytes"))
  }

  /// Why ``smallFile(_:limit:)`` read nothing, for people.
  package struct SmallFileFailure: Error, Sendable {
    /// The system's reason (`strerror`), or the limit passed.
    package let reason: String

    init(errno code: Int32) { reason = String(cString: strerror(code)) }
    init(reason: String) { self.reason = reason }
  }

  /// fsyncs the directory holding `path`, so a rename or link in it survives a power loss.
  static func syncDirectory(of path: String) {
    let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { return }
    fsync(fd)
    close(fd)
  }

  /// The wall clock, in seconds since 1970.
  static func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
  }
}
