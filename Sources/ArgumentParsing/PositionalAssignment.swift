/// Hands bare words to a command's positionals, in declaration order.
///
/// Each positional takes as many words as it can while leaving enough for the required ones
/// after it: a plain one takes one word, a repeating one all it can, an optional one none if
/// the words run short.
struct PositionalAssignment {
  /// The command's positional specs, in declaration order.
  let specs: [ArgumentSpec]
  /// The command being read, root first, for error messages.
  let commandPath: [String]

  /// The words each positional takes, by name. Throws ``UsageError`` when a required positional
  /// gets no word, or a word is left that no positional takes.
  func assign(_ words: [String]) throws(UsageError) -> [String: [String]] {
    var assigned: [String: [String]] = [:]
    var next = 0
    for (index, spec) in specs.enumerated() {
      guard case .positional(let repeating, let optional) = spec.kind else { continue }
      let neededLater = specs[(index + 1)...].reduce(0) { $0 + Self.minimum($1) }
      let available = max(0, words.count - next - neededLater)
      let taking = repeating ? available : min(1, available)
      if taking == 0 && !optional {
        throw UsageError("missing argument '\(spec.valueName)'", commandPath: commandPath)
      }
      let taken = Array(words[next..<(next + taking)])
      if !spec.choices.isEmpty, let word = taken.first(where: { !spec.choices.contains($0) }) {
        let hint = Suggestion.closest(to: word, among: spec.choices).map { " (did you mean '\($0)'?)" } ?? ""
        let listed = spec.choices.joined(separator: ", ")
        throw UsageError(
          "\(spec.valueName) expects one of \(listed); got '\(word)'\(hint)", commandPath: commandPath)
      }
      assigned[spec.name] = taken
      next += taking
    }
    if next < words.count {
      throw UsageError("unexpected argument '\(words[next])'", commandPath: commandPath)
    }
    return assigned
  }

  /// How many words `spec` needs at least: one for a required positional, else none.
  private static func minimum(_ spec: ArgumentSpec) -> Int {
    if case .positional(_, optional: false) = spec.kind { return 1 }
    return 0
  }
}
