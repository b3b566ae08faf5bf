/// One declared argument of a command: an option that takes a value, a flag, or a positional.
///
/// Each ``ArgumentKey`` carries one: commands list their keys in ``ParsableCommand/arguments``,
/// the parser reads the command line against the keys' specs, and the help page is generated
/// from them. Specs are made only by the keys' factories (``FlagKey``, ``OptionKey``,
/// ``PositionalKey``), so that every declared argument has a key to read it by.
/// Nothing is checked when a spec is made; ``CommandRouter/problems`` reports clashing names.
public struct ArgumentSpec: Sendable, Equatable {
  /// What sort of argument a spec declares.
  public enum Kind: Sendable, Equatable {
    /// `--name VALUE`, `--name=VALUE` or `-x VALUE`; optional, and the last one given wins.
    case option
    /// `--name` or `-x`, present or absent; it takes no value.
    case flag
    /// A bare word; `repeating` takes every remaining word, `optional` allows none.
    case positional(repeating: Bool, optional: Bool)
  }

  /// Which sort of argument this is.
  public let kind: Kind
  /// The name values are stored under: the long name without dashes (`"cache-dir"`), or a
  /// positional's name (`"url"`).
  public let name: String
  /// The one-letter short form (`-d`), for options and flags; `nil` when there is none.
  public let short: Character?
  /// How the value is shown in usage and help: `DIR` in `--cache-dir DIR`, `URL` for a positional.
  public let valueName: String
  /// One or two sentences for the help page, wrapped there to fit 80 columns.
  public let help: String
  /// How an option's text is read (`"whole number Int positive"`, `"text"`), so that two keys
  /// for the same name that read it differently are different declarations; empty for flags
  /// and positionals.
  var reading = ""
  /// The values a choice option or positional accepts, in order (shell completion offers
  /// them); empty for every other argument.
  var choices: [String] = []
  /// Older long names an option or flag still answers to (without dashes), kept so that scripts
  /// written against them go on working; help names them after the help text. Empty for most.
  public internal(set) var aliases: [String] = []

  /// The help text as help pages and the manual print it: ``help``, then the older names when
  /// there are any ("(Also --max-bytes, its older name.)").
  var helpNamingAliases: String {
    guard !aliases.isEmpty else { return help }
    return help + " (Also " + aliases.map { "--" + $0 }.joined(separator: ", ") + ", its older name.)"
  }

  /// Declares an option that takes a value: `--long VALUE`, `--long=VALUE`, or `-s VALUE`.
  ///
  /// A value that starts with `-` (other than `-` itself and negative numbers) must use the
  /// `--long=VALUE` form; otherwise parsing reports the value as missing.
  /// `reading` says how the key reads the value (see ``reading``).
  static func option(
    long: String, short: Character? = nil, valueName: String = "VALUE", help: String, reading: String,
    choices: [String] = []
  ) -> ArgumentSpec {
    ArgumentSpec(
      kind: .option, name: long, short: short, valueName: valueName, help: help, reading: reading,
      choices: choices)
  }

  /// Declares a flag: `--long` or `-s`, true when present. Giving it a value is a usage error.
  static func flag(long: String, short: Character? = nil, help: String) -> ArgumentSpec {
    ArgumentSpec(kind: .flag, name: long, short: short, valueName: "", help: help)
  }

  /// Declares a positional argument, filled from bare words in declaration order.
  ///
  /// `valueName` defaults to the upper-cased name (`url` shows as `URL`); pass `"FILE|-"` or the
  /// like to show something else. A `repeating` positional takes every word the positionals after
  /// it do not need (at least one unless `optional`), so `SOURCE... DEST` works; declare at most
  /// one. A missing required positional, or a word left over, is a usage error when parsing.
  /// `choices`, when given, are the only words it takes.
  static func positional(
    name: String, valueName: String? = nil, help: String, repeating: Bool = false,
    optional: Bool = false, choices: [String] = []
  ) -> ArgumentSpec {
    ArgumentSpec(
      kind: .positional(repeating: repeating, optional: optional), name: name, short: nil,
      valueName: valueName ?? name.uppercased(), help: help, choices: choices)
  }

  /// Whether this spec is a positional (of any sort).
  var isPositional: Bool {
    if case .positional = kind { return true }
    return false
  }
}
