import Glibc

/// One file the benchmark server offers: its URL path, where it is on disk, and how it is
/// served.
struct Resource: Sendable {
  /// The URL path, e.g. `/media/cold-1m.wav`.
  var path: String
  /// The file on disk.
  var file: String
  /// The `Content-Type` sent.
  var contentType: String
  /// Extra response headers (e.g. `Cache-Control`).
  var headers: [(String, String)]
  /// The entity tag, when the resource revalidates with one.
  var etag: String?
}

/// The files every scenario downloads, generated once per run into a `www` directory, and
/// their URL paths. The same tree is served by nginx or by the built-in server.
struct ContentTree: Sendable {
  /// The sizes of the cold-download scenario: label and bytes.
  static let coldSizes: [(label: String, bytes: Int)] = [
    ("100k", 100 * 1024), ("1m", 1 << 20), ("10m", 10 << 20), ("45m", 45 << 20),
  ]
  /// The size of the "5 MB" cache-hit body, in bytes.
  static let hitLargeBytes = 5_000_000
  /// The size of the small bodies (hits, revalidation, scale), in bytes.
  static let smallBytes = 1024
  /// The size of each batch body, in bytes.
  static let batchBytes = 100 * 1024
  /// The size of the HTML page served as `image/jpeg`, in bytes.
  static let htmlBytes = 10 << 20
  /// The `Content-Length` of the oversized declared body, in bytes.
  static let declaredBytes = 60 << 20

  /// The directory served as the document root.
  let root: String
  /// How many distinct small hit files there are.
  let hitFiles: Int
  /// How many distinct batch files there are.
  let batchFiles: Int
  /// How many distinct churn files there are (100 KiB JPEGs like the batch, other bodies).
  let churnFiles: Int
  /// How many distinct bodies each cold size has (label → count).
  let coldFiles: [String: Int]

  /// Writes every file under `root` (which must not exist yet).
  /// - Throws: ``BenchError`` when a file cannot be written.
  init(root: String, hitFiles: Int, batchFiles: Int, churnFiles: Int = 0, coldFiles: [String: Int]) throws {
    self.root = root
    self.hitFiles = hitFiles
    self.batchFiles = batchFiles
    self.churnFiles = churnFiles
    self.coldFiles = coldFiles
    for sub in ["media", "cold", "hit", "batch", "churn", "reval", "as-jpeg", "big"] {
      try Files.makeDirectory(root + "/" + sub)
    }
    for (index, size) in Self.coldSizes.enumerated() {
      for copy in 0..<max(1, coldFiles[size.label] ?? 1) {
        try MediaFactory.writeWAV(
          bytes: size.bytes, seed: 100 + index * 10_000 + copy, to: root + Self.coldPath(size.label, copy))
      }
    }
    try MediaFactory.writeWAV(bytes: Self.hitLargeBytes, seed: 7, to: root + Self.hitLargePath)
    for index in 0..<hitFiles {
      try Files.write(
        MediaFactory.jpeg(bytes: Self.smallBytes, seed: 1_000 + index), to: root + Self.hitPath(index))
    }
    for index in 0..<batchFiles {
      try Files.write(
        MediaFactory.jpeg(bytes: Self.batchBytes, seed: 5_000 + index), to: root + Self.batchPath(index))
    }
    for index in 0..<churnFiles {
      try Files.write(
        MediaFactory.jpeg(bytes: Self.batchBytes, seed: 50_000 + index), to: root + Self.churnPath(index))
    }
    try Files.write(MediaFactory.jpeg(bytes: Self.smallBytes, seed: 3), to: root + Self.revalidatePath)
    try Files.write(MediaFactory.htmlPage(bytes: Self.htmlBytes), to: root + Self.htmlAsJPEGPath)
    try Self.writeDeclared(to: root + Self.declaredPath)
  }

  /// The URL path of distinct body `copy` of a cold-download size.
  static func coldPath(_ label: String, _ copy: Int = 0) -> String { "/cold/\(label)-\(copy).wav" }
  /// The URL path of the 5 MB hit body.
  static let hitLargePath = "/media/hit-5m.wav"
  /// The URL path of small hit file `index`.
  static func hitPath(_ index: Int) -> String { "/hit/small-\(index).jpg" }
  /// The URL path of batch file `index`.
  static func batchPath(_ index: Int) -> String { "/batch/\(index).jpg" }
  /// The URL path of churn file `index`.
  static func churnPath(_ index: Int) -> String { "/churn/\(index).jpg" }
  /// The URL path of the revalidated entry (`max-age=0` and an ETag).
  static let revalidatePath = "/reval/small.jpg"
  /// The URL path of the HTML page served as `image/jpeg`.
  static let htmlAsJPEGPath = "/as-jpeg/page.html"
  /// The URL path of the body that declares 60 MiB.
  static let declaredPath = "/big/declared-60m.wav"

  /// Every file with how it is served, for the built-in server (nginx reads the same tree).
  var resources: [Resource] {
    let fresh = [("Cache-Control", "max-age=86400")]
    var list: [Resource] = []
    func add(_ path: String, _ type: String, _ headers: [(String, String)], etag: String? = nil) {
      list.append(
        Resource(path: path, file: root + path, contentType: type, headers: headers, etag: etag))
    }
    for size in Self.coldSizes {
      for copy in 0..<max(1, coldFiles[size.label] ?? 1) {
        add(Self.coldPath(size.label, copy), "audio/wav", fresh)
      }
    }
    add(Self.hitLargePath, "audio/wav", fresh)
    for index in 0..<hitFiles { add(Self.hitPath(index), "image/jpeg", fresh) }
    for index in 0..<batchFiles { add(Self.batchPath(index), "image/jpeg", fresh) }
    for index in 0..<churnFiles { add(Self.churnPath(index), "image/jpeg", fresh) }
    add(Self.revalidatePath, "image/jpeg", [("Cache-Control", "max-age=0")], etag: "\"reval-1\"")
    add(Self.htmlAsJPEGPath, "image/jpeg", [])
    add(Self.declaredPath, "audio/wav", [])
    return list
  }

  /// A sparse file of ``declaredBytes`` whose first bytes are a WAV header.
  private static func writeDeclared(to path: String) throws {
    try MediaFactory.writeWAV(bytes: 4096, seed: 9, to: path)
    guard truncate(path, off_t(declaredBytes)) == 0 else {
      throw BenchError("truncate failed: \(String(cString: strerror(errno)))")
    }
  }
}
