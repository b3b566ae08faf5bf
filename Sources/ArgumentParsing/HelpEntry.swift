/// One row of a help page's ARGUMENTS, OPTIONS or SUBCOMMANDS list: a label and what it does.
struct HelpEntry {
  /// What is typed: `-d, --cache-dir DIR`, `URL`, `stats`.
  let label: String
  /// What it does.
  let help: String

  /// The built-in `-h, --help` row.
  static let help = HelpEntry(label: "-h, --help", help: "Show help information.")
  /// The built-in `--version` row, on the root only.
  static let version = HelpEntry(label: "--version", help: "Show the version.")

  /// The row for a declared option, flag or positional.
  init(_ spec: ArgumentSpec) {
    let short = spec.short.map { "-\($0), " } ?? ""
    switch spec.kind {
    case .option: label = "\(short)--\(spec.name) \(spec.valueName)"
    case .flag: label = "\(short)--\(spec.name)"
    case .positional: label = spec.valueName
    }
    help = spec.helpNamingAliases
  }

  /// A row with a label and help text of its own.
  init(label: String, help: String) {
    self.label = label
    self.help = help
  }

  /// The row's lines, the help starting at `column` (on the next line if the label reaches it).
  func lines(column: Int) -> [String] {
    let labelled = "  " + label
    let indent = String(repeating: " ", count: column)
    guard !help.isEmpty else { return [labelled] }
    guard labelled.count + 2 <= column else {
      return [labelled] + TextWrapping.paragraphs(help, firstPrefix: indent, indent: indent)
    }
    let padded = labelled + String(repeating: " ", count: column - labelled.count)
    return TextWrapping.paragraphs(help, firstPrefix: padded, indent: indent)
  }

  /// The column all rows of a page share: two past the widest label, at most `maximum`.
  static func column(for entries: [HelpEntry], maximum: Int = 30) -> Int {
    min(maximum, 2 + (entries.map(\.label.count).max() ?? 0) + 2)
  }
}

extension ArgumentSpec {
  /// How the argument appears in a usage line: `[--json]`, `[--cache-dir DIR]`, `URL`, `[FILE...]`.
  var usageToken: String {
    switch kind {
    case .option: "[--\(name) \(valueName)]"
    case .flag: "[--\(name)]"
    case .positional(let repeating, let optional):
      optional ? "[\(valueName)\(repeating ? "..." : "")]" : "\(valueName)\(repeating ? "..." : "")"
    }
  }
}
