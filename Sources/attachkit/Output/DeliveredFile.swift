import AttachmentKit
import Glibc

/// Copies of delivered files, for `rescue --output` and `fetch --output`: the cache keeps its
/// own file, the caller gets one of its own to move or edit.
enum DeliveredFile {
  /// Copies `file` to `output` (created or replaced); `io_error` on failure, with `output` removed.
  static func copy(_ file: String, to output: String) throws(AttachmentError) {
    let input = open(file, O_RDONLY | O_CLOEXEC)
    guard input >= 0 else { throw AttachmentError(.ioError, "Cannot read \(Terminal.safe(file)).") }
    defer { close(input) }
    let written = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard written >= 0 else { throw AttachmentError(.ioError, "Cannot write \(Terminal.safe(output)).") }
    defer { close(written) }
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
      if count == 0 { return }
      if count < 0 && errno == EINTR { continue }
      guard count > 0, buffer.withUnsafeBytes({ writeAll($0, count: count, to: written) }) else {
        unlink(output)
        throw AttachmentError(.ioError, "Cannot copy \(Terminal.safe(file)) to \(Terminal.safe(output)).")
      }
    }
  }

  /// Writes the first `count` bytes of `bytes` to `fd`; false when a write fails.
  private static func writeAll(_ bytes: UnsafeRawBufferPointer, count: Int, to fd: Int32) -> Bool {
    guard let base = bytes.baseAddress else { return false }
    var offset = 0
    while offset < count {
      let sent = write(fd, base + offset, count - offset)
      if sent < 0 && errno == EINTR { continue }
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
    let segment = path.split(separator: "/").last ?? ""
    let stem = segment.lastIndex(of: ".").map { segment[..<$0] } ?? segment
    let safe = String(
      stem.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    let base = safe.isEmpty || safe.hasPrefix(".") ? "attachment" : safe
    return base + "." + fileExtension
  }
}
