import AttachmentKit
import Glibc

/// Standard input as a file, for the commands that take a file (`validate -`, `rescue -`): the
/// checks and the rescuers read a file by position and size, which a pipe has not, so its bytes
/// are spooled to a temporary file first (in `$TMPDIR`, else `/tmp`), removed once the command
/// is done with it.
enum StandardInput {
  /// Spools standard input to a new temporary file, runs `body` with its path, and removes it.
  /// - Throws: `io_error` (with the system's reason) when the file cannot be made or written or
  ///   standard input cannot be read; or what `body` throws.
  static func withSpooledFile<T>(_ body: (String) throws(AttachmentError) -> T) throws(AttachmentError) -> T {
    let (path, descriptor) = try makeFile()
    defer { unlink(path) }
    let spooled = Result { () throws(AttachmentError) in try spool(into: descriptor, path: path) }
    close(descriptor)
    try spooled.get()
    return try body(path)
  }

  /// The directory temporary files go to: `$TMPDIR` when it is set and not empty, else `/tmp`.
  static var temporaryDirectory: String {
    guard let value = getenv("TMPDIR").map({ String(cString: $0) }), !value.isEmpty else { return "/tmp" }
    return value.hasSuffix("/") && value.count > 1 ? String(value.dropLast()) : value
  }

  /// A new empty file of this user's only (`mkstemp`: mode 0600, a name no other file has),
  /// closed on exec (the rescue workers get their descriptors passed, not inherited).
  private static func makeFile() throws(AttachmentError) -> (path: String, descriptor: Int32) {
    let directory = temporaryDirectory
    var template = Array("\(directory)/attachkit-stdin-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { buffer in
      buffer.baseAddress.map { mkstemp($0) } ?? -1
    }
    if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    guard descriptor >= 0 else {
      throw DeliveredFile.ioError("Cannot create a file in \(Terminal.safe(directory)) for standard input")
    }
    let path = template.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.map { String(cString: $0) } ?? ""
    }
    return (path, descriptor)
  }

  /// Copies standard input to its end into `descriptor` (the file at `path`).
  private static func spool(into descriptor: Int32, path: String) throws(AttachmentError) {
    try DeliveredFile.pump(0, to: descriptor, reading: "standard input", writing: Terminal.safe(path))
  }
}
