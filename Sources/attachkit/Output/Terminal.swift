import AttachmentKit
import Glibc

/// Writing to the terminal or a pipe, without Foundation.
enum Terminal {
  /// Writes text to standard output.
  static func out(_ text: String) { write(1, text) }

  /// Writes text to standard error.
  static func error(_ text: String) { write(2, text) }

  /// Whether a descriptor is a terminal.
  static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

  /// Whether a descriptor is a terminal that takes escape sequences (colour, erasing a line):
  /// a terminal whose `TERM` is set and is not `dumb` (Emacs' shell, some CI logs).
  static func takesEscapes(_ fd: Int32) -> Bool {
    guard isTerminal(fd), let term = getenv("TERM").map({ String(cString: $0) }) else { return false }
    return !term.isEmpty && term != "dumb"
  }

  /// Whether colour may be used on a descriptor (``takesEscapes(_:)``, and `NO_COLOR` unset).
  static func allowsColor(_ fd: Int32) -> Bool {
    takesEscapes(fd) && (getenv("NO_COLOR").map { String(cString: $0).isEmpty } ?? true)
  }

  /// Text with control characters escaped, so input (URLs, file names) cannot steer a terminal.
  static func safe(_ text: String) -> String { Redaction.escapeControlCharacters(text) }

  /// Multi-line text (a usage message) with control characters escaped in each line, line
  /// breaks kept.
  static func safeLines(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }.joined(
      separator: "\n")
  }

  /// A URL fit to print: credentials redacted, control characters escaped.
  static func safeURL(_ url: String) -> String { Redaction.redact(url) }

  private static func write(_ fd: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let written = bytes.withUnsafeMutableBytes {
        Glibc.write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset)
      }
      if written < 0 {
        if errno == EINTR { continue }
        return
      }
      offset += written
    }
  }
}
