import Glibc

/// Temporary files for bodies in flight and records being written: created 0600 with a
/// recognisable name. The cache writes its records' temporary files only under its lock, so
/// a sweep (which holds it) removes any it finds; ownership is never judged by process id.
package enum TemporaryFile {
  /// The name prefix of every temporary body file.
  static let prefix = ".attachkit-"
  /// The name suffix of every temporary body file.
  static let suffix = ".part"

  /// A fresh name for a file in flight in `directory`: hidden, `.attachkit-<pid>-<random>.part`
  /// (what sweeps recognise); nothing is created.
  package static func path(in directory: String) -> String {
    let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)  // one getrandom, not eight
    return "\(base)/\(prefix)\(getpid())-\(token)\(suffix)"
  }

  /// Creates a new empty file in `directory` (`O_EXCL`, mode 0600, random name) and returns its
  /// path and an open descriptor for writing.
  /// - Throws: `io_error` when the directory is missing or not writable, or the disk is full.
  package static func create(in directory: String) throws(AttachmentError) -> (
    path: String, descriptor: Int32
  ) {
    for _ in 0..<16 {
      let path = path(in: directory)
      let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if descriptor >= 0 { return (path, descriptor) }
      if errno != EEXIST && errno != EINTR {
        let reason = String(cString: strerror(errno))
        throw AttachmentError(.ioError, "Cannot create a temporary file in \(directory): \(reason).")
      }
    }
    throw AttachmentError(.ioError, "Cannot find a free temporary file name in \(directory).")
  }
}
