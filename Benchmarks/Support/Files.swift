import AttachmentKit
import Glibc

/// Small POSIX file helpers for the benchmark's scratch space.
enum Files {
  /// Creates a fresh private directory in `parent` whose name starts with `prefix`.
  /// - Throws: ``BenchError`` when `mkdtemp` fails.
  static func makeTemporaryDirectory(prefix: String, in parent: String = "/tmp") throws -> String {
    var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return false }
      return mkdtemp(base) != nil
    }
    guard made else { throw BenchError("mkdtemp failed: \(String(cString: strerror(errno)))") }
    let path = template.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.map { String(cString: $0) }
    }
    guard let path else { throw BenchError("mkdtemp gave no path") }
    return path
  }

  /// Creates `path` (and missing parents) as a directory.
  /// - Throws: ``BenchError`` when it cannot be created.
  static func makeDirectory(_ path: String) throws {
    if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
    if errno == ENOENT, let slash = path.lastIndex(of: "/"), slash > path.startIndex {
      try makeDirectory(String(path[..<slash]))
      if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
    }
    throw BenchError("Cannot create \(path): \(String(cString: strerror(errno)))")
  }

  /// Removes `path` and everything below it; missing paths are fine. Bounded by depth 16.
  static func removeTree(_ path: String, depth: Int = 0) {
    guard depth < 16 else { return }
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    if info.st_mode & S_IFMT == S_IFDIR {
      for name in names(in: path) {
        removeTree(path + "/" + name, depth: depth + 1)
      }
      rmdir(path)
    } else {
      unlink(path)
    }
  }

  /// The names in a directory, without `.` and `..`.
  static func names(in directory: String) -> [String] {
    guard let handle = opendir(directory) else { return [] }
    defer { closedir(handle) }
    var result: [String] = []
    while let entry = readdir(handle) {
      let name = DirectoryEntry.name(entry)
      if name != "." && name != ".." { result.append(name) }
    }
    return result
  }

  /// The size of a file in bytes, or `nil` when it does not exist.
  static func size(_ path: String) -> Int64? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int64(info.st_size)
  }

  /// Writes `bytes` to `path`, replacing it.
  /// - Throws: ``BenchError`` on any write failure.
  static func write(_ bytes: [UInt8], to path: String) throws {
    let writer = try FileWriter(path: path)
    defer { writer.close() }
    try writer.append(bytes)
  }

  /// Writes `text` as UTF-8 to `path`, replacing it.
  /// - Throws: ``BenchError`` on any write failure.
  static func write(_ text: String, to path: String) throws {
    try write(Array(text.utf8), to: path)
  }

  /// The whole of a small file, or `nil`.
  static func read(_ path: String, limit: Int = 1 << 24) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while out.count < limit {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      out.append(contentsOf: buffer[0..<count])
    }
    return out
  }
}

/// A file opened for writing, truncated, written in pieces.
final class FileWriter {
  private var descriptor: Int32

  /// Opens (creating or truncating) `path` for writing.
  /// - Throws: ``BenchError`` when it cannot be opened.
  init(path: String) throws {
    descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw BenchError("Cannot open \(path): \(String(cString: strerror(errno)))")
    }
  }

  deinit { close() }

  /// Writes all of `bytes`.
  /// - Throws: ``BenchError`` when a write fails.
  func append(_ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        guard let base = raw.baseAddress else { return }
        let written = Glibc.write(descriptor, base + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          throw BenchError("write failed: \(String(cString: strerror(errno)))")
        }
        offset += written
      }
    }
  }

  /// Closes the file (idempotent).
  func close() {
    if descriptor >= 0 {
      _ = Glibc.close(descriptor)
      descriptor = -1
    }
  }
}

/// A failure of the benchmark itself (not of the library under test), with a message.
struct BenchError: Error, CustomStringConvertible {
  /// What went wrong.
  let description: String

  /// Makes an error with a message.
  init(_ description: String) {
    self.description = description
  }
}
