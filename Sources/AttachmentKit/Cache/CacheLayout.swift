import Glibc

/// Where everything lives under a cache directory. No path is ever derived from URL text:
/// records are named by the keyed SipHash-2-4-128 of the normalized URL (``CacheRecordKey``),
/// content by its own SHA-256.
///
/// ```
/// ROOT/v3/content/a/abcd…ef.jpg    immutable content, named by hash, canonical extension
/// ROOT/v3/records                  the records: one LMDB store (``RecordStore``), one entry per
///                                  normalized URL, and the secret that names them
/// ROOT/v3/records-lock             LMDB's table of readers (shared memory of the processes)
/// ROOT/v3/tmp/                     named bodies in flight (only where O_TMPFILE is missing),
///                                  unindexed (no-store) files
/// ROOT/v3/lock                     the advisory lock for publishes, record writes and sweeps,
///                                  holding the size ledger (``CacheLedger``) in its first bytes
/// ```
///
/// The 16 fan-out directories under `content` (the first hex digit) are made on first use, by
/// the first publish into each, so an entry costs one inode (its content file) and no
/// directory once the cache has seen a few dozen entries. 16 rather than 256: making 512
/// directories cost ~200 ms on this machine's ext4 under load, while 100,000 entries make only
/// 6,250 names a directory, which ext4's hashed directories look up as fast.
///
/// Earlier formats are never read: version 1 (`ROOT/v1`, two fan-out levels) and version 2
/// (`ROOT/v2`, a file per record) are removed by the next sweep or `clear`, so an old cache's
/// URLs are misses, fetched again into `v3`.
struct CacheLayout: Sendable {
  /// The cache directory the caller chose.
  let root: String
  /// The versioned root; a format change gets a new one.
  var versioned: String { root + "/v3" }
  /// Roots of earlier formats, removed by sweeps.
  var legacy: [String] { [root + "/v1", root + "/v2"] }
  /// Content files.
  var content: String { versioned + "/content" }
  /// The record store (an LMDB file; LMDB adds `-lock` for its readers' table).
  var records: String { versioned + "/records" }
  /// Temporary files.
  var temporary: String { versioned + "/tmp" }
  /// The lock file.
  var lockFile: String { versioned + "/lock" }

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

  /// Creates the directories (mode 0700) and checks that the root and the versioned root are
  /// safe to use: directories (not symbolic links) owned by this user and not writable by
  /// others (so no one else can put anything inside). `content` and `tmp` are made with a new
  /// versioned root; in an existing one, each is checked (and made again if missing) by the
  /// first write that needs it, so a hit looks at two directories only.
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
    var found = lstat(versioned, &info) == 0
    if !found, errno == ENOENT {
      created = mkdir(versioned, 0o700) == 0
      if created {
        for directory in [content, temporary] { try Self.makeDirectory(directory) }
      }
      found = lstat(versioned, &info) == 0
    }
    guard found else {
      throw AttachmentError(
        .ioError, "Cannot use the cache directory \(versioned): \(String(cString: strerror(errno))).")
    }
    if let problem = CacheFiles.directoryProblem(info, groupWritableAllowed: false) {
      throw AttachmentError(.ioError, "The cache directory \(versioned) \(problem).")
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
