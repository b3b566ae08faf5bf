extension StringProtocol {
  /// The text without leading and trailing characters from `set` (Foundation's
  /// `trimmingCharacters(in:)` without loading Foundation).
  package func trimmingCharacters(in set: String) -> String {
    var slice = self[...]
    while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
    while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
    return String(slice)
  }
}
