import AttachmentKit
import Glibc

/// Copies of delivered files, for `rescue --output` and `fetch --output`: the cache keeps its
/// own file, the caller gets one of its own to move or edit (or its bytes on standard output).
enum DeliveredFile {
  /// Copies `file` to `output` (created or replaced); `io_error` on failure, with `output` removed.
  static func copy(_ file: String, to output: String) throws(AttachmentError) {
    let input = open(file, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw ioError("Cannot read \(Terminal.safe(file))") }
    defer { close(input) }
    let written = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard written >= 0 else { throw ioError("Cannot write \(Terminal.safe(output))") }
    defer { close(written) }
    do throws(AttachmentError) {
      try pump(input, to: written, reading: file, writing: Terminal.safe(output))
    } catch {
      unlink(output)
      throw error
    }
  }

  /// Writes the bytes of `file` to standard output (`fetch -o -`); `io_error` on failure (a
  /// reader that went away: "Broken pipe").
  static func writeToStandardOutput(_ file: String) throws(AttachmentError) {
    let input = open(file, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw ioError("Cannot read \(Terminal.safe(file))") }
    defer { close(input) }
    try pump(input, to: 1, reading: file, writing: "standard output")
  }

  /// Renames `file` to `destination` (replacing it), in one directory; `io_error` on failure,
  /// with `file` removed.
  static func move(_ file: String, to destination: String) throws(AttachmentError) {
    guard rename(file, destination) == 0 else {
      let error = ioError("Cannot write \(Terminal.safe(destination))")
      unlink(file)
      throw error
    }
  }

  /// A name for a file in flight in `directory` (``AttachmentKit/TemporaryFile``'s: hidden,
  /// never a name that ``name(forFile:fileExtension:)`` gives): a delivered file is written
  /// there, then moved to the name its type decides.
  static func temporaryPath(in directory: String) -> String {
    TemporaryFile.path(in: directory)
  }

  /// Copies what is left of `input` to `output` (`file` and `destination` name them in
  /// messages); `io_error` with the system's reason when a read or a write fails.
  static func pump(
    _ input: Int32, to output: Int32, reading file: String, writing destination: String
  ) throws(AttachmentError) {
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
      if count == 0 { return }
      if count < 0 {
        if errno == EINTR { continue }
        throw ioError("Cannot read \(Terminal.safe(file))")
      }
      guard buffer.withUnsafeBytes({ writeAll($0, count: count, to: output) }) else {
        throw ioError("Cannot write \(destination)")
      }
    }
  }

  /// `io_error` with `message`, the system's reason (`strerror(errno)`) and a full stop:
  /// "Cannot read /tmp: Is a directory."
  static func ioError(_ message: String) -> AttachmentError {
    AttachmentError(.ioError, "\(message): \(String(cString: strerror(errno))).")
  }

  /// Writes the first `count` bytes of `bytes` to `fd`; false when a write fails (`errno` says why).
  private static func writeAll(_ bytes: UnsafeRawBufferPointer, count: Int, to fd: Int32) -> Bool {
    guard let base = bytes.baseAddress else { return false }
    var offset = 0
    while offset < count {
      let sent = write(fd, base + offset, count - offset)
      if sent < 0 && errno == EINTR { continue }
      if sent == 0 { errno = EIO }
      if sent <= 0 { return false }
      offset += sent
    }
    return true
  }

  /// Whether `path` names a directory (following a symbolic link), or ends with `/`.
  static func isDirectory(_ path: String) -> Bool {
    var status = stat()
    return path.hasSuffix("/") || (stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
  }

  /// The name a URL's file gets in a directory: the last segment of its path, without its query,
  /// with its extension replaced by `fileExtension` (`…/push/123?v=2` → `123.jpg`,
  /// `…/banner.jpeg` → `banner.jpg`). Characters other than letters, digits, `.`, `_` and `-`
  /// become `_`; a path with no usable segment gives `attachment`.
  static func name(forURL url: String, fileExtension: String) -> String {
    let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? url[...]
    let path = afterScheme.drop { $0 != "/" }.prefix { $0 != "?" && $0 != "#" }
    return name(lastSegmentOf: path, fileExtension: fileExtension)
  }

  /// The name a local file's delivered file gets in a directory, as ``name(forURL:fileExtension:)``
  /// names a URL's: `photos/banner.webp` → `banner.jpg`; standard input (`-`) gives `attachment`.
  static func name(forFile path: String, fileExtension: String) -> String {
    name(lastSegmentOf: path == "-" ? "" : path[...], fileExtension: fileExtension)
  }

  /// The last `/`-separated segment of `path`, its extension replaced by `fileExtension`, made
  /// safe for a file name (see ``name(forURL:fileExtension:)``).
  private static func name(lastSegmentOf path: Substring, fileExtension: String) -> String {
    let segment = path.split(separator: "/").last ?? ""
    let stem = segment.lastIndex(of: ".").map { segment[..<$0] } ?? segment
    let safe = String(
      stem.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    let base = safe.isEmpty || safe.hasPrefix(".") ? "attachment" : safe
    return base + "." + fileExtension
  }
}
