/// "Did you mean" suggestions: the candidate closest to a mistyped word.
enum Suggestion {
  /// The furthest a candidate may be from the typed word and still be suggested.
  static let maximumDistance = 2

  /// The candidate within ``maximumDistance`` edits of `typed` that is closest to it (the first
  /// declared on a tie), or `nil` when none is that close.
  static func closest(to typed: String, among candidates: [String]) -> String? {
    var best: (candidate: String, distance: Int)?
    for candidate in candidates where candidate != typed {
      let distance = editDistance(typed, candidate)
      if distance <= maximumDistance, distance < (best?.distance ?? Int.max) {
        best = (candidate, distance)
      }
    }
    return best?.candidate
  }

  /// The number of single-character insertions, deletions, substitutions and swaps of two
  /// neighbours that turn `source` into `target` (optimal string alignment distance).
  static func editDistance(_ source: String, _ target: String) -> Int {
    let a = Array(source)
    let b = Array(target)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    // rows[i][j]: the distance between the first i characters of a and the first j of b.
    var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { rows[i][0] = i }
    for j in 0...b.count { rows[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        var distance = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          distance = min(distance, rows[i - 2][j - 2] + 1)
        }
        rows[i][j] = distance
      }
    }
    return rows[a.count][b.count]
  }
}
