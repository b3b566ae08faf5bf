/// The ENVIRONMENT part of a help page and of the manual, for a command with a
/// ``CommandConfiguration/environmentPrefix``: which variable sets which option.
enum EnvironmentHelp {
  /// The lead sentence above the table.
  static let lead =
    "Each option can also be set by an environment variable; the command line wins over it, and an empty variable counts as unset. A flag's variable is 1, true, yes or on to set it (0, false, no or off: not set)."

  /// The variable and the option of every option and flag of `specs`, in declaration order.
  static func rows(_ specs: [ArgumentSpec], prefix: String) -> [(variable: String, option: String)] {
    specs.filter { !$0.isPositional }.map { spec in
      (
        spec.environmentVariable(prefix: prefix),
        spec.kind == .flag ? "--\(spec.name)" : "--\(spec.name) \(spec.valueName)"
      )
    }
  }

  /// The help page's block: `ENVIRONMENT:`, the lead, then one row a variable.
  static func block(_ specs: [ArgumentSpec], prefix: String) -> [String] {
    let rows = rows(specs, prefix: prefix).map { HelpEntry(label: $0.variable, help: $0.option) }
    let column = HelpEntry.column(for: rows, maximum: 40)
    return ["ENVIRONMENT:"] + TextWrapping.paragraphs(lead, firstPrefix: "  ", indent: "  ") + [""]
      + rows.flatMap { $0.lines(column: column) }
  }
}
