/// What a command is called and how its help page describes it.
///
/// A command either runs (it has ``ParsableCommand/arguments``) or groups others (it has
/// ``subcommands``); a group's own arguments are ignored. Nothing is checked when one is made;
/// ``CommandRouter/problems`` reports duplicate subcommand names.
public struct CommandConfiguration: Sendable {
  /// The word typed to pick this command (`"fetch"`), or the program name for the root.
  public var name: String
  /// One line saying what the command does; shown as OVERVIEW and in the parent's command list.
  public var abstract: String
  /// Paragraphs shown under the overview; line breaks are kept and long lines wrapped.
  public var discussion: String
  /// The text `--version` prints; only the root's is used, and `nil` turns `--version` off.
  public var version: String?
  /// The commands under this one, in the order help lists them; empty for a command that runs.
  public var subcommands: [any ParsableCommand.Type]
  /// Whole example command lines, shown under EXAMPLES one to a line.
  public var examples: [String]
  /// Free-form sections (exit codes, environment, ...) shown last, in this order.
  public var sections: [HelpSection]
  /// When set, every option and flag of the command can also come from an environment
  /// variable: this prefix, then the long name in capitals with `-` as `_` (`"ATTACHKIT_"`
  /// gives `--max-connections` the variable `ATTACHKIT_MAX_CONNECTIONS`). The command line wins;
  /// an empty variable counts as unset; a flag's variable is `1`, `true`, `yes` or `on` (set) or
  /// `0`, `false`, `no` or `off` (not set), in any case; a bad value is a usage error that
  /// names the variable. Help lists the variables under ENVIRONMENT. `nil` (the default): none.
  public var environmentPrefix: String?

  /// Makes a configuration; only the name and the abstract are required.
  public init(
    name: String, abstract: String, discussion: String = "", version: String? = nil,
    subcommands: [any ParsableCommand.Type] = [], examples: [String] = [],
    sections: [HelpSection] = [], environmentPrefix: String? = nil
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.version = version
    self.subcommands = subcommands
    self.examples = examples
    self.sections = sections
    self.environmentPrefix = environmentPrefix
  }
}
