/// A command of the command line, declared as a type: its configuration and its arguments.
///
/// Usually a caseless `enum`. Declaring one cannot fail; mistakes in the declarations (two
/// options with the same name, say) are listed by ``CommandRouter/problems``.
///
/// ```swift
/// enum Fetch: ParsableCommand {
///   static let configuration = CommandConfiguration(name: "fetch", abstract: "Downloads one URL.")
///   static let arguments: [ArgumentSpec] = [
///     .flag(long: "json", help: "Print JSON."),
///     .positional(name: "url", help: "What to download."),
///   ]
/// }
/// ```
public protocol ParsableCommand: SendableMetatype {
  /// The command's name, help text and subcommands.
  static var configuration: CommandConfiguration { get }
  /// The options, flags and positionals the command accepts; `-h`/`--help` is always added.
  static var arguments: [ArgumentSpec] { get }
}

extension ParsableCommand {
  /// No arguments: the default for groups and for commands that take none.
  public static var arguments: [ArgumentSpec] { [] }
}
