import Glibc

/// Why a test file could not be written: the path and the `errno` text.
public struct TestFileError: Error, CustomStringConvertible {
  /// The file that was being written.
  public let path: String
  /// What failed, with the system's reason.
  public let description: String

  /// An error about `path`, saying what failed and why.
  public init(path: String, description: String) {
    self.path = path
    self.description = description
  }
}

/// Writes `bytes` to the file at `path` (made, or emptied first; mode 0644 unless `mode` says
/// otherwise), without `fsync`.
///
/// Foundation's writes (`Data.write(to:)`, `String.write(toFile:…)`, even non-atomic, and
/// `FileManager.createFile`) all call `fsync` on Linux. On a machine busy writing to disk that
/// blocks the calling thread for up to seconds, and on Swift's cooperative pool, whose two
/// threads every test of the process shares, that is every other test's deadline passing
/// meanwhile. A test's files need no durability.
///
/// - Throws: ``TestFileError`` when the file cannot be opened or written.
public func writeTestFile<Bytes: Sequence>(_ bytes: Bytes, to path: String, mode: mode_t = 0o644) throws
where Bytes.Element == UInt8 {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
  guard descriptor >= 0 else {
    throw TestFileError(path: path, description: "cannot open \(path): \(String(cString: strerror(errno)))")
  }
  defer { close(descriptor) }
  let contents = Array(bytes)
  var written = 0
  while written < contents.count {
    let count = contents.withUnsafeBytes { buffer in
      write(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written)
    }
    if count < 0 && errno == EINTR { continue }
    guard count > 0 else {
      throw TestFileError(
        path: path, description: "cannot write \(path): \(String(cString: strerror(errno)))")
    }
    written += count
  }
}

/// Writes `text` as UTF-8 to the file at `path`, without `fsync` (see
/// ``writeTestFile(_:to:mode:)-(Bytes,_,_)``).
///
/// - Throws: ``TestFileError`` when the file cannot be opened or written.
public func writeTestFile(_ text: String, to path: String, mode: mode_t = 0o644) throws {
  try writeTestFile(Array(text.utf8), to: path, mode: mode)
}
