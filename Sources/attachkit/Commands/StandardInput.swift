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
    // (a new file of this user's only: mode 0600, a name no other file has, closed on exec, as
    // the rescue workers get their descriptors passed, not inherited)
    let (path, descriptor) = try TemporaryFile.create(in: temporaryDirectory)
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

  /// Copies standard input to its end into `descriptor` (the file at `path`).
  private static func spool(into descriptor: Int32, path: String) throws(AttachmentError) {
    try DeliveredFile.pump(0, to: descriptor, reading: "standard input", writing: Terminal.safe(path))
  }
}
