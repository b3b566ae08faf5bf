/// A declared argument that is also the key to read its value by: a ``FlagKey``, an
/// ``OptionKey`` or a ``PositionalKey``.
///
/// Declare each key once, as a `static let` next to the command (or in a shared group), list it
/// in ``ParsableCommand/arguments``, and read it with the subscripts of ``ParsedArguments``:
///
/// ```swift
/// enum Fetch: ParsableCommand {
///   static let json = FlagKey(long: "json", help: "Print JSON.")
///   static let deadline = OptionKey<Double>.number(
///     long: "deadline", valueName: "SECONDS", help: "Give up after this long.", bound: .positive)
///   static let urls = PositionalKey<[String]>.repeating(name: "url", help: "What to download.")
///   static let arguments: [any ArgumentKey] = [json, deadline, urls]
/// }
///
/// let asJSON = arguments[Fetch.json]                  // Bool
/// let seconds = try arguments[Fetch.deadline] ?? 25   // Double, or a UsageError
/// let urls = arguments[Fetch.urls]                    // [String]
/// ```
///
/// A misspelt key does not compile, and a key of one kind cannot be read as another. Reading a
/// key the command does not list is a programming error that stops the program (see
/// ``ParsedArguments/declares(_:)``).
public protocol ArgumentKey: Sendable {
  /// The declaration: the name, the kind, and how help shows it.
  var spec: ArgumentSpec { get }
}

/// A flag, `--long` or `-s`: true when given. Giving it a value is a usage error.
public struct FlagKey: ArgumentKey, Equatable {
  /// The declaration, of kind ``ArgumentSpec/Kind/flag``.
  public let spec: ArgumentSpec

  /// Declares the flag `--long` (and `-short`, when given) with its help text.
  public init(long: String, short: Character? = nil, help: String) {
    spec = .flag(long: long, short: short, help: help)
  }
}

/// A positional argument, filled from bare words in declaration order: a single word
/// (`PositionalKey<String>`) or every word the later positionals do not need
/// (`PositionalKey<[String]>`).
///
/// Make one with ``positional(name:valueName:help:optional:)`` or
/// ``repeating(name:valueName:help:optional:)``. A missing required positional, or a word left
/// over, is a usage error when parsing.
public struct PositionalKey<Value: Sendable>: ArgumentKey {
  /// The declaration, of kind ``ArgumentSpec/Kind/positional(repeating:optional:)``.
  public let spec: ArgumentSpec

  /// Wraps a positional declaration; the factories below are the only callers.
  private init(spec: ArgumentSpec) {
    self.spec = spec
  }
}

extension PositionalKey where Value == String {
  /// Declares a positional that takes one word; `optional` lets it take none, and `choices`,
  /// when given, are the only words it takes (anything else is a usage error that lists them).
  ///
  /// `valueName` defaults to the upper-cased name (`url` shows as `URL`).
  public static func positional(
    name: String, valueName: String? = nil, help: String, optional: Bool = false, choices: [String] = []
  ) -> PositionalKey {
    PositionalKey(
      spec: .positional(
        name: name, valueName: valueName, help: help, repeating: false, optional: optional, choices: choices))
  }
}

extension PositionalKey where Value == [String] {
  /// Declares a positional that takes every word the positionals after it do not need: at least
  /// one, unless `optional`. Declare at most one per command.
  ///
  /// `valueName` defaults to the upper-cased name (`file` shows as `FILE...`).
  public static func repeating(
    name: String, valueName: String? = nil, help: String, optional: Bool = false
  ) -> PositionalKey {
    PositionalKey(
      spec: .positional(name: name, valueName: valueName, help: help, repeating: true, optional: optional))
  }
}
