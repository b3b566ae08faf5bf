import Glibc

/// Lists of URLs as `prefetch` and `fetch -` read them: one URL a line, from a file or from
/// standard input.
enum URLList {
  /// The URLs in `text`: the first word of each line, skipping blank lines and lines whose
  /// first word starts with `#`.
  static func urls(in text: String) -> [String] {
    text.split(whereSeparator: \.isNewline)
      .compactMap { $0.split(whereSeparator: \.isWhitespace).first.map(String.init) }
      .filter { !$0.hasPrefix("#") }
  }

  /// The URLs of the file `source`, or of standard input when `source` is `-`; `nil` when it
  /// cannot be read.
  static func urls(from source: String) -> [String]? {
    readText(source).map(urls(in:))
  }

  /// The whole text of a file, or of standard input for `-`.
  static func readText(_ source: String) -> String? {
    let fd = source == "-" ? 0 : open(source, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { if fd != 0 { close(fd) } }
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { break }
      data.append(contentsOf: buffer[0..<count])
    }
    return String(decoding: data, as: UTF8.self)
  }
}
