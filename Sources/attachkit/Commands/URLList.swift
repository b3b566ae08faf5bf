import AttachmentKit
import Glibc

/// Lists of URLs as `prefetch`, `fetch -` and `sign -` read them: one URL a line, from a file or
/// from standard input.
enum URLList {
  /// One line of a list that names a URL.
  struct Entry: Sendable, Equatable {
    /// The line without the white space around it.
    let text: String
    /// Its line number in the list, from 1.
    let line: Int

    /// The line as a URL.
    /// - Throws: `invalid_url` naming the line when it holds more than one word (a line is one
    ///   URL: `not a url` is not the URL `not`), or when its text is no usable URL.
    func url() throws(AttachmentError) -> AttachmentURL {
      if text.contains(where: \.isWhitespace) {
        throw AttachmentError(
          .invalidURL, "Line \(line) is not one URL: a line holds one URL and nothing else.")
      }
      do {
        return try AttachmentURL(text)
      } catch {
        throw AttachmentError(error.code, "Line \(line): \(error.message)", kind: error.kind)
      }
    }
  }

  /// Why a list could not be read.
  struct ReadFailure: Error {
    /// "cannot read 'PATH': the system's reason", for a usage error.
    let message: String
  }

  /// The entries of `text`: each line, trimmed, skipping blank lines and lines starting with
  /// `#`.
  static func entries(in text: String) -> [Entry] {
    var entries: [Entry] = []
    var number = 0
    for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
      number += 1
      let trimmed = line.trimmingWhitespace()
      guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
      entries.append(Entry(text: trimmed, line: number))
    }
    return entries
  }

  /// The entries of the file `source`, or of standard input when `source` is `-`.
  /// - Throws: ``ReadFailure`` naming the source and the system's reason (a directory, a
  ///   missing file, a permission denied).
  static func entries(from source: String) throws(ReadFailure) -> [Entry] {
    entries(in: try readText(source))
  }

  /// The whole text of a file, or of standard input for `-`.
  /// - Throws: ``ReadFailure`` naming the source and the system's reason.
  static func readText(_ source: String) throws(ReadFailure) -> String {
    let name = source == "-" ? "standard input" : "'\(Terminal.safe(source))'"
    func failure(_ code: Int32) -> ReadFailure {
      ReadFailure(message: "cannot read \(name): \(String(cString: strerror(code)))")
    }
    let fd = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw failure(errno) }
    defer { if fd != 0 { close(fd) } }
    var info = stat()
    if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { throw failure(EISDIR) }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw failure(errno)
      }
      if count == 0 { break }
      data.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: data, as: UTF8.self)
  }
}

extension Substring {
  /// This text without white space (a carriage return included) at either end.
  fileprivate func trimmingWhitespace() -> String {
    guard let first = firstIndex(where: { !$0.isWhitespace }),
      let last = lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(self[first...last])
  }
}
