import Testing

@testable import ArgumentParsing

/// The line-filling under the help pages.
@Suite("Text wrapping")
struct TextWrappingTests {
  @Test("fills words up to the width, continuing at the indent")
  func fill() {
    // Given words that need three lines of 20 columns
    let words = "one two three four five six seven eight nine".split(separator: " ").map(String.init)

    // When they are filled after a prefix
    let lines = TextWrapping.fill(words, firstPrefix: "> ", indent: "  ", width: 20)

    // Then no line passes 20 columns and later lines start at the indent
    #expect(lines == ["> one two three four", "  five six seven", "  eight nine"])
  }

  @Test("gives a word longer than a line a line of its own")
  func longWord() {
    // Given a URL longer than the width
    let url = "https://example.com/" + String(repeating: "a", count: 30)

    // When it is filled between short words
    let lines = TextWrapping.fill(["see", url, "now"], firstPrefix: "", indent: "", width: 20)

    // Then it is not broken
    #expect(lines == ["see", url, "now"])
  }

  @Test("keeps line breaks and blank lines of prose")
  func paragraphs() {
    // Given two paragraphs separated by a blank line
    let lines = TextWrapping.paragraphs("first\n\nsecond", firstPrefix: "", indent: "")

    // Then the blank line stays
    #expect(lines == ["first", "", "second"])
  }

  @Test("keeps preformatted lines that fit exactly as written")
  func preformattedFits() {
    // Given a table with aligned columns
    let table = "  0    ok\n  10   partly\n\nflush"

    // Then its spacing is kept
    #expect(TextWrapping.preformatted(table) == ["  0    ok", "  10   partly", "", "flush"])
  }

  @Test("hangs a long preformatted line under its leading spaces when it has no column gap")
  func preformattedProse() {
    // Given an indented line of prose longer than 80 columns
    let line = "    " + Array(repeating: "word", count: 20).joined(separator: " ")

    // When it is wrapped
    let lines = TextWrapping.preformatted(line)

    // Then the continuation keeps the indent and no line passes 80 columns
    #expect(lines.count == 2)
    #expect(lines.allSatisfy { $0.hasPrefix("    word") && $0.count <= 80 })
  }
}
