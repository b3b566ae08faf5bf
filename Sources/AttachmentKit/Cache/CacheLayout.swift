import Glibc

/// Where everything lives under a cache directory. No path is ever derived from URL text:
/// records are named by the keyed SipHash-2-4-128 of the normalized URL (``CacheRecordKey``),
/// content by its own SHA-256.
///
/// ```
/// ROOT/v2/content/a/abcd…ef.jpg    immutable content, named by hash, canonical extension
/// ROOT/v2/index/1/1234…89          one record per normalized URL
/// ROOT/v2/tmp/                     named bodies in flight (only where O_TMPFILE is missing),
///                                  records being written, unindexed (no-store) files
/// ROOT/v2/key                      the 16-byte secret that names the records (0600)
/// ROOT/v2/lock                     the advisory lock for publishes, record writes and sweeps,
///                                  holding the size ledger (``CacheLedger``) in its first bytes
/// ```
///
/// The 16 fan-out directories under `content` and `index` (the first hex digit) are made on
/// first use, by the first publish into each, so an entry costs two inodes (its content and
/// its record) and no directory once the cache has seen a few dozen entries, and a new cache
/// that serves one file makes two directories, not 32 (each an inode allocation, the slowest
/// part of a cold fetch into a fresh cache on this machine's ext4). 16 rather than 256: making
/// 512 directories cost ~200 ms on this machine's ext4 under load (32: ~19 ms), while 100,000
/// entries make only 6,250 names a directory, which ext4's hashed directories look up as fast.
/// Version 1 (`ROOT/v1`, two fan-out levels made per entry) is never read: it is
/// removed by the next sweep or `clear`.
struct CacheLayout: Sendable {
  /// The cache directory the caller chose.
  let root: String
  /// The versioned root; a format change gets a new one.
  var versioned: String { root + "/v2" }
  /// Roots of earlier formats, removed by sweeps.
  var legacy: [String] { [root + "/v1"] }
  /// Content files.
  var content: String { versioned + "/content" }
  /// Index records.
  var index: String { versioned + "/index" }
  /// Temporary files.
  var temporary: String { versioned + "/tmp" }
  /// The lock file.
  var lockFile: String { versioned + "/lock" }
  /// The record-naming key (``CacheRecordKey``).
  var keyFile: String { versioned + "/key" }

  /// The fan-out directory names, `0` … `f`.
  static let shards: [String] = (0..<16).map { String($0, radix: 16) }

  /// The content directory of a hash.
  func contentDirectory(sha256: String) -> String { "\(content)/\(sha256.prefix(1))" }

  /// The content file name of a hash and extension.
  static func contentName(sha256: String, fileExtension: String) -> String { "\(sha256).\(fileExtension)" }

  /// The content file of a hash and extension.
  func contentPath(sha256: String, fileExtension: String) -> String {
    "\(contentDirectory(sha256: sha256))/\(Self.contentName(sha256: sha256, fileExtension: fileExtension))"
  }

  /// The index directory of a record name.
  func recordDirectory(digest: String) -> String { "\(index)/\(digest.prefix(1))" }

  /// The record file of a record name.
  func recordPath(digest: String) -> String { "\(recordDirectory(digest: digest))/\(digest)" }

  /// Creates the directories (mode 0700) and checks that the root and every directory of the
  /// versioned root are safe to use: directories (not symbolic links) owned by this user and
  /// not writable by others. The fan-out directories are left to the first publish into each.
  /// - Returns: whether this call made the versioned root (a new, empty cache).
  /// - Throws: `io_error` naming what is wrong.
  @discardableResult
  func prepare() throws(AttachmentError) -> Bool {
    // An existing cache is looked at, not created again: one stat per directory, and a
    // mkdir only for one that is missing.
    var info = stat()
    if stat(root, &info) != 0 {
      if errno == ENOENT { try Self.makeDirectory(root) }
      guard stat(root, &info) == 0 else {
        throw AttachmentError(
          .ioError, "Cannot use the cache directory \(root): \(String(cString: strerror(errno))).")
      }
    }
    if let problem = CacheFiles.directoryProblem(info, groupWritableAllowed: true) {
      throw AttachmentError(.ioError, "The cache directory \(root) \(problem).")
    }
    var created = false
    for directory in [versioned, content, index, temporary] {
      if lstat(directory, &info) != 0 {
        if errno == ENOENT {
          if directory == versioned {
            created = mkdir(versioned, 0o700) == 0
          } else {
            try Self.makeDirectory(directory)
          }
        }
        guard lstat(directory, &info) == 0 else {
          throw AttachmentError(
            .ioError, "Cannot use the cache directory \(directory): \(String(cString: strerror(errno))).")
        }
      }
      if let problem = CacheFiles.directoryProblem(info, groupWritableAllowed: false) {
        throw AttachmentError(.ioError, "The cache directory \(directory) \(problem).")
      }
    }
    return created
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
