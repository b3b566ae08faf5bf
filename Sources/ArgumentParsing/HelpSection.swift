/// A free-form section at the end of a command's help page, such as `EXIT CODES` or `EXAMPLES`.
///
/// The body is kept line by line: each line keeps its leading spaces, and a line longer than
/// 80 columns is wrapped with its continuation indented to match. Nothing here can fail.
public struct HelpSection: Sendable, Equatable {
  /// The heading, printed in capitals followed by a colon (`"Exit codes"` shows as `EXIT CODES:`).
  public var title: String
  /// The text under the heading; write it already indented (two spaces is the house style).
  public var body: String

  /// Makes a section from a heading and its text.
  public init(title: String, body: String) {
    self.title = title
    self.body = body
  }
}
