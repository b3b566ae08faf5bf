extension CommandRouter {
  /// The manual page of the whole tree in roff (`man -l` reads it), generated from the same
  /// declarations as `--help`: NAME and SYNOPSIS from the root, DESCRIPTION from its
  /// discussion, OPTIONS (the root's), COMMANDS with one subsection per command (its overview,
  /// discussion, usage, arguments, options, examples and sections), then the root's EXAMPLES
  /// and sections. `section` is the manual section, 1 for commands. Ends with a newline.
  public func manPage(section: Int = 1) -> String {
    ManPage(router: self, section: section).render()
  }
}

/// Writes ``CommandRouter/manPage(section:)``.
struct ManPage {
  /// The tree to describe.
  let router: CommandRouter
  /// The manual section.
  let section: Int

  /// The whole page.
  func render() -> String {
    let nodes = router.nodes
    guard let root = nodes.first else { return "" }
    let configuration = root.command.configuration
    let program = configuration.name
    var lines = [
      ".TH \(Self.quoted(program.uppercased())) \(section) \"\" \(Self.quoted(configuration.version ?? program))",
      ".nh", ".ad l", ".SH NAME", "\(Self.escape(program)) \\- \(Self.escape(configuration.abstract))",
      ".SH SYNOPSIS", ".B \(Self.escape(program))", ".I command", ".RI [ options ]",
    ]
    if !configuration.discussion.isEmpty {
      lines += [".SH DESCRIPTION"] + Self.paragraphs(configuration.discussion)
    }
    lines +=
      [".SH OPTIONS"] + root.options.flatMap(Self.item)
      + router.builtInSpecs(at: root.path).flatMap(Self.item)
    lines.append(".SH COMMANDS")
    for node in nodes.dropFirst() { lines += subsection(node) }
    if !configuration.examples.isEmpty {
      lines += [".SH EXAMPLES"] + Self.preformatted(configuration.examples)
    }
    for section in configuration.sections {
      lines += [".SH \(Self.quoted(section.title.uppercased()))"] + Self.preformatted([section.body])
    }
    return (lines + [""]).joined(separator: "\n")
  }

  /// One command's subsection under COMMANDS.
  private func subsection(_ node: CommandNode) -> [String] {
    let configuration = node.command.configuration
    var lines = [".SS \(Self.quoted(node.name))"] + Self.paragraphs(configuration.abstract)
    if !configuration.discussion.isEmpty { lines += [".PP"] + Self.paragraphs(configuration.discussion) }
    let tokens =
      node.isGroup
      ? ["<subcommand>"] : (node.options + node.positionals).map(\.usageToken)
    lines += [".PP", ".B Usage:", Self.escape(([node.name] + tokens).joined(separator: " "))]
    if node.isGroup {
      lines += [".PP", "Subcommands:"]
      for subcommand in node.subcommands {
        lines += [".TP", ".B \(Self.escape(subcommand.configuration.name))"]
        lines += Self.paragraphs(subcommand.configuration.abstract)
      }
    }
    if !node.positionals.isEmpty { lines += [".PP", "Arguments:"] + node.positionals.flatMap(Self.item) }
    lines +=
      [".PP", "Options:"] + node.options.flatMap(Self.item)
      + router.builtInSpecs(at: node.path).flatMap(Self.item)
    if !configuration.examples.isEmpty {
      lines += [".PP", "Examples:"] + Self.preformatted(configuration.examples)
    }
    if let prefix = configuration.environmentPrefix, !node.options.isEmpty {
      lines += [".PP", "Environment:"] + Self.paragraphs(EnvironmentHelp.lead)
      for row in EnvironmentHelp.rows(node.options, prefix: prefix) {
        lines += [".TP", "\\fB\(Self.escape(row.variable))\\fR", Self.escape(row.option)]
      }
    }
    for section in configuration.sections {
      lines +=
        [".PP", "\\fB\(Self.escape(section.title.uppercased()))\\fR"] + Self.preformatted([section.body])
    }
    return lines
  }

  /// A `.TP` item for one argument: `-q, --quiet`, `--cache-dir DIR` or `URL`, then its help.
  private static func item(_ spec: ArgumentSpec) -> [String] {
    let short = spec.short.map { "\\fB\\-\(escape(String($0)))\\fR, " } ?? ""
    let label: String
    switch spec.kind {
    case .option: label = "\(short)\\fB\\-\\-\(escape(spec.name))\\fR \\fI\(escape(spec.valueName))\\fR"
    case .flag: label = "\(short)\\fB\\-\\-\(escape(spec.name))\\fR"
    case .positional: label = "\\fI\(escape(spec.valueName))\\fR"
    }
    return [".TP", label] + paragraphs(spec.helpNamingAliases)
  }

  /// Prose: each line of `text` a paragraph (`.PP` between them), escaped.
  private static func paragraphs(_ text: String) -> [String] {
    let parts = text.split(separator: "\n").map { escape(String($0)) }
    return parts.enumerated().flatMap { index, part in index == 0 ? [part] : [".PP", part] }
  }

  /// Lines kept as written (`.nf` … `.fi`), escaped.
  private static func preformatted(_ blocks: [String]) -> [String] {
    [".PP", ".nf"] + blocks.flatMap { $0.split(separator: "\n").map { escape(String($0)) } } + [".fi"]
  }

  /// `text` safe as roff text: backslashes as `\e`, hyphens as `\-` (so options copy as
  /// typed), a few common characters by their groff names and anything else beyond ASCII as
  /// `\[uXXXX]` (roff reads ASCII only), and a line that would start with `.` or `'` (a request) guarded by `\&`.
  static func escape(_ text: String) -> String {
    var escaped = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\\": escaped += "\\e"
      case "-": escaped += "\\-"
      case _ where !scalar.isASCII:
        if let named = namedCharacters[scalar] {
          escaped += named
          continue
        }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
  }

  /// Characters groff names with an ASCII fallback, so the page reads on any terminal.
  private static let namedCharacters: [Unicode.Scalar: String] = [
    "\u{2026}": "...", "\u{2192}": "\\(->", "\u{2190}": "\\(<-", "\u{00D7}": "\\(mu",
    "\u{2264}": "\\(<=", "\u{2265}": "\\(>=", "\u{2014}": "\\(em", "\u{2013}": "\\(en",
    "\u{00B7}": "\\(pc", "\u{00B5}": "\\(mc", "\u{2019}": "'", "\u{2018}": "`",
  ]

  /// `text` as one quoted roff argument.
  private static func quoted(_ text: String) -> String {
    "\"" + escape(text).replacing("\"", with: "\\(dq") + "\""
  }
}
