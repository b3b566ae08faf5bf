/// A command of the command line, declared as a type: its configuration and its arguments.
///
/// Usually a caseless `enum`. Declaring one cannot fail; mistakes in the declarations (two
/// options with the same name, say) are listed by ``CommandRouter/problems``.
///
/// ```swift
/// enum Fetch: ParsableCommand {
///   static let configuration = CommandConfiguration(name: "fetch", abstract: "Downloads one URL.")
///   static let json = FlagKey(long: "json", help: "Print JSON.")
///   static let url = PositionalKey<String>.positional(name: "url", help: "What to download.")
///   static let arguments: [any ArgumentKey] = [json, url]
/// }
/// ```
///
/// Its run code then reads `arguments[Fetch.json]` and `arguments[Fetch.url]`.
public protocol ParsableCommand: SendableMetatype {
  /// The command's name, help text and subcommands.
  static var configuration: CommandConfiguration { get }
  /// The keys of the options, flags and positionals the command accepts, in the order help
  /// lists them; `-h`/`--help` is always added.
  static var arguments: [any ArgumentKey] { get }
}

extension ParsableCommand {
  /// No arguments: the default for groups and for commands that take none.
  public static var arguments: [any ArgumentKey] { [] }

  /// The declarations of ``arguments``, in order.
  static var specs: [ArgumentSpec] { arguments.map(\.spec) }
}
