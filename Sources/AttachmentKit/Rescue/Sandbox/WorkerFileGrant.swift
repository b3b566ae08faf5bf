import CWorkerIO
import Glibc

/// The job's two files, made reachable for a worker that runs as another user (the unprivileged
/// worker of a root parent), which opens them again as /proc/self/fd/N and so needs the
/// permission bits to let it: the output (a file the pool just created) is given to that user
/// for the job and taken back after; a source that user cannot read is copied into a file of its
/// own that no path names (`O_TMPFILE` beside the output), read-only. A worker of the parent's
/// own user is given the descriptors as they are.
struct WorkerFileGrant {
  /// The source descriptor to send the worker.
  let source: Int32
  private let output: Int32
  private let copiedSource: Bool
  private let handedOver: Bool

  init(source: Int32, output: Int32, for worker: WorkerProcess) {
    self.output = output
    guard worker.isUnprivileged else {
      (self.source, copiedSource, handedOver) = (source, false, false)
      return
    }
    let id = SpawnLayers.unprivilegedID
    handedOver = fchown(output, id, id) == 0
    var facts = stat()
    let readable =
      fstat(source, &facts) == 0
      && (facts.st_mode & S_IROTH != 0 || (facts.st_uid == id && facts.st_mode & S_IRUSR != 0))
    if readable {
      (self.source, copiedSource) = (source, false)
    } else if let copy = Self.copy(source, besideDescriptor: output, owner: id) {
      (self.source, copiedSource) = (copy, true)
    } else {
      (self.source, copiedSource) = (source, false)
    }
  }

  /// Takes the output back for the parent's user and closes the copy.
  func revoke() {
    if handedOver { _ = fchown(output, getuid(), getgid()) }
    if copiedSource { close(source) }
  }

  /// A read-only copy of `source` in a file no path names, in the directory of `output` (so the
  /// same file system, where `copy_file_range` copies in the kernel), owned by `owner`.
  private static func copy(_ source: Int32, besideDescriptor output: Int32, owner: UInt32) -> Int32? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/fd/\(output)", &buffer, Int(PATH_MAX))
    var directory = "/tmp"
    if length > 0 {
      let path = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if let slash = path.lastIndex(of: "/"), path.hasPrefix("/") {
        directory = slash == path.startIndex ? "/" : String(path[..<slash])
      }
    }
    let copy = ak_private_copy(source, directory, owner)
    return copy >= 0 ? copy : nil
  }
}
