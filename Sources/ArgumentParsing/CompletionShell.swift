/// A shell that ``CommandRouter/completionScript(for:)`` writes a completion script for.
public enum CompletionShell: String, CaseIterable, Sendable {
  /// GNU bash: `source <(attachkit completion bash)`, or the file in
  /// `/usr/share/bash-completion/completions/attachkit`.
  case bash
  /// zsh: the file `_attachkit` in a directory of `$fpath`, before `compinit`.
  case zsh
  /// fish: the file `attachkit.fish` in `~/.config/fish/completions/`.
  case fish
}

extension CommandRouter {
  /// The completion script for `shell`, generated from the same declarations as `--help`:
  /// every command and subcommand, every option and flag (with `-h/--help`, and `--version`
  /// on the root), choice values, and file or directory names where a value names a file
  /// (`FILE`, `OUT`) or a directory (`DIR`). Ends with a newline.
  public func completionScript(for shell: CompletionShell) -> String {
    switch shell {
    case .bash: BashCompletion(router: self).script
    case .zsh: ZshCompletion(router: self).script
    case .fish: FishCompletion(router: self).script
    }
  }
}

/// Quoting for shell scripts.
enum ShellQuote {
  /// `text` in single quotes, for bash, zsh and fish alike (a `'` inside closes the quote,
  /// adds an escaped one and reopens it; fish reads `\'` inside single quotes instead).
  static func single(_ text: String, fish: Bool = false) -> String {
    let escaped =
      fish
      ? text.replacing("\\", with: "\\\\").replacing("'", with: "\\'")
      : text.replacing("'", with: "'\\''")
    return "'" + escaped + "'"
  }

  /// A function name part made of the path's words: `attachkit cache gc` → `attachkit_cache_gc`,
  /// anything but letters and digits as `_`.
  static func identifier(_ words: [String]) -> String {
    String(words.joined(separator: "_").map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
  }
}
