import Glibc

/// Temporary files for bodies in flight: created 0600 with a recognisable name holding the
/// creating process's id, so that a cache can sweep the ones a crash left behind.
enum TemporaryFile {
  /// The name prefix of every temporary body file.
  static let prefix = ".attachkit-"
  /// The name suffix of every temporary body file.
  static let suffix = ".part"

  /// Whether a file name is one of ours.
  static func isTemporary(name: String) -> Bool { name.hasPrefix(prefix) && name.hasSuffix(suffix) }

  /// The process that created a temporary file, from its name (`.attachkit-PID-RANDOM.part`).
  static func owner(ofName name: String) -> Int32? {
    guard isTemporary(name: name) else { return nil }
    let middle = name.dropFirst(prefix.count).prefix { $0 != "-" }
    return Int32(middle)
  }

  /// Whether a temporary file was left by a process that no longer runs.
  static func isAbandoned(name: String) -> Bool {
    guard let pid = owner(ofName: name) else { return true }
    return kill(pid, 0) != 0 && errno == ESRCH
  }

  /// Creates a new empty file in `directory` (`O_EXCL`, mode 0600, random name) and returns its
  /// path and an open descriptor for writing.
  /// - Throws: `io_error` when the directory is missing or not writable, or the disk is full.
  static func create(in directory: String) throws(AttachmentError) -> (path: String, descriptor: Int32) {
    let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    for _ in 0..<16 {
      let token = String(UInt64.random(in: 0...UInt64.max), radix: 16)  // one getrandom, not eight
      let path = "\(base)/\(prefix)\(getpid())-\(token)\(suffix)"
      let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
      if descriptor >= 0 { return (path, descriptor) }
      if errno != EEXIST && errno != EINTR {
        let reason = String(cString: strerror(errno))
        throw AttachmentError(.ioError, "Cannot create a temporary file in \(directory): \(reason).")
      }
    }
    throw AttachmentError(.ioError, "Cannot find a free temporary file name in \(directory).")
  }
}
