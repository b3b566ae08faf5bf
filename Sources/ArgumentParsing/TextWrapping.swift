/// Fits text to the help page's width by breaking lines between words.
enum TextWrapping {
  /// The width of a help page, in characters.
  static let width = 80

  /// Lays `words` out in lines of at most `width` characters: the first line starts with
  /// `firstPrefix`, later ones with `indent`. A word too long for any line gets a line to itself.
  static func fill(_ words: [String], firstPrefix: String, indent: String, width: Int = width) -> [String] {
    var lines: [String] = []
    var line = firstPrefix
    var lineHasWord = false
    for word in words where !word.isEmpty {
      if lineHasWord, line.count + 1 + word.count > width {
        lines.append(line)
        line = indent
        lineHasWord = false
      }
      line += (lineHasWord ? " " : "") + word
      lineHasWord = true
    }
    lines.append(line)
    return lines.map(trimmingTrailingSpaces)
  }

  /// Wraps prose: each line of `text` is a paragraph filled after `firstPrefix` (the first) or
  /// `indent` (the others), continuing at `indent`; empty lines stay empty.
  static func paragraphs(_ text: String, firstPrefix: String, indent: String) -> [String] {
    var lines: [String] = []
    for (index, paragraph) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let words = paragraph.split(separator: " ").map(String.init)
      lines += fill(words, firstPrefix: index == 0 ? firstPrefix : indent, indent: indent)
    }
    return lines
  }

  /// Wraps text that is laid out already. A line that fits is kept as it is. A longer one keeps
  /// everything up to its first gap of two or more spaces (a table's first column) and wraps the
  /// rest under the text after that gap, or under its own leading spaces when it has no gap.
  static func preformatted(_ text: String) -> [String] {
    var lines: [String] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      guard line.count > width else {
        lines.append(trimmingTrailingSpaces(String(line)))
        continue
      }
      let head = String(line.prefix(hangingColumn(of: line)))
      let words = line.dropFirst(head.count).split(separator: " ").map(String.init)
      lines += fill(words, firstPrefix: head, indent: String(repeating: " ", count: head.count))
    }
    return lines
  }

  /// Wraps a command line (an example) so that it still pastes into a shell: a line that fits
  /// is kept; a longer one is broken between words, each line but the last ending in ` \` and
  /// the continuations indented four more spaces than the first.
  static func commandLine(_ text: String) -> [String] {
    guard text.count > width else { return [trimmingTrailingSpaces(text)] }
    let leading = String(text.prefix { $0 == " " })
    let words = text.split(separator: " ").map(String.init)
    let lines = fill(words, firstPrefix: leading, indent: leading + "    ", width: width - 2)
    return lines.enumerated().map { index, line in index == lines.count - 1 ? line : line + " \\" }
  }

  /// Where a long line's continuation starts: after the first gap of two or more spaces that
  /// follows some text within the left half, or else after the line's leading spaces.
  private static func hangingColumn(of line: Substring) -> Int {
    let characters = Array(line)
    let leading = characters.prefix { $0 == " " }.count
    var index = leading
    while index < characters.count {
      if characters[index] == " " {
        let gapEnd = characters[index...].firstIndex { $0 != " " } ?? characters.count
        if gapEnd - index >= 2, gapEnd < characters.count {
          return gapEnd <= width / 2 ? gapEnd : leading
        }
        index = gapEnd
      } else {
        index += 1
      }
    }
    return leading
  }

  /// `line` without spaces at its end.
  private static func trimmingTrailingSpaces(_ line: String) -> String {
    var trimmed = Substring(line)
    while trimmed.last == " " { trimmed.removeLast() }
    return String(trimmed)
  }
}
