import Glibc

/// Where everything lives under a cache directory. No path is ever derived from URL text:
/// records are named by the SHA-256 of the normalized URL, content by its own SHA-256.
///
/// ```
/// ROOT/v1/content/ab/cd/abcd…ef.jpg   immutable content, named by hash, canonical extension
/// ROOT/v1/index/12/1234…89            one record per normalized URL
/// ROOT/v1/tmp/                        bodies in flight and records being written
/// ROOT/v1/lock                        the advisory lock for index writes and sweeps
/// ```
struct CacheLayout: Sendable {
  /// The cache directory the caller chose.
  let root: String
  /// The versioned root; a format change gets a new one.
  var versioned: String { root + "/v1" }
  /// Content files.
  var content: String { versioned + "/content" }
  /// Index records.
  var index: String { versioned + "/index" }
  /// Temporary files.
  var temporary: String { versioned + "/tmp" }
  /// The lock file.
  var lockFile: String { versioned + "/lock" }

  /// The content file of a hash and extension.
  func contentPath(sha256: String, fileExtension: String) -> String {
    let a = sha256.prefix(2)
    let b = sha256.dropFirst(2).prefix(2)
    return "\(content)/\(a)/\(b)/\(sha256).\(fileExtension)"
  }

  /// The record file of a URL key digest.
  func recordPath(digest: String) -> String {
    "\(index)/\(digest.prefix(2))/\(digest)"
  }

  /// Creates the directories (mode 0700) and checks the root is safe to use: a directory
  /// owned by this user and not writable by others.
  /// - Throws: `io_error` naming what is wrong.
  func prepare() throws(AttachmentError) {
    try Self.makeDirectory(root)
    var info = stat()
    guard stat(root, &info) == 0 else {
      throw AttachmentError(
        .ioError, "Cannot use the cache directory \(root): \(String(cString: strerror(errno))).")
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw AttachmentError(.ioError, "The cache path \(root) is not a directory.")
    }
    guard info.st_uid == getuid() else {
      throw AttachmentError(
        .ioError, "The cache directory \(root) belongs to another user (uid \(info.st_uid)).")
    }
    guard info.st_mode & S_IWOTH == 0 else {
      throw AttachmentError(
        .ioError, "The cache directory \(root) is writable by everyone; refusing to use it.")
    }
    for directory in [versioned, content, index, temporary] {
      try Self.makeDirectory(directory)
    }
  }

  /// Creates a directory (0700) and its parents if missing.
  static func makeDirectory(_ path: String) throws(AttachmentError) {
    if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
    if errno == ENOENT {
      let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
      if !parent.isEmpty, parent != path {
        try makeDirectory(parent)
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
      }
    }
    throw AttachmentError(
      .ioError, "Cannot create the directory \(path): \(String(cString: strerror(errno))).")
  }
}
