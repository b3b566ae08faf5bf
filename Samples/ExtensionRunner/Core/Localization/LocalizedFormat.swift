/// Fills a localized format string with `loc-args`, as iOS does for an alert.
///
/// iOS's `loc-args` are strings, so every argument is inserted as text:
/// - `%@` takes the next argument; `%n$@` takes argument n (from 1), in any order, as often as
///   it appears; `%%` is a literal `%`.
/// - The other conversions (`%d`, `%i`, `%u`, `%ld`, `%lld`, `%f`, `%.2f`, `%s`, `%x`…) are read
///   the same way (flags, width, precision and length modifiers are accepted and ignored) and
///   insert the argument's text unchanged: `"%d photos"` with `["3"]` gives `"3 photos"`.
///   (A real printf would read a number where iOS passes a string.)
/// - A specifier without its argument (too few arguments, or a position past the end) becomes
///   empty. Text that is not a specifier (`%` at the end, `%q`, `%*d`, `%n`) is kept as written.
/// - The result stops at ``largestResult`` characters, so a hostile format cannot repeat a long
///   argument without limit.
public enum LocalizedFormat {
  /// The longest result, in Unicode scalars (an APNs payload is at most 4 KiB).
  public static let largestResult = 16_384

  /// What filling a format gave.
  public struct Result: Sendable, Equatable {
    /// The text.
    public var text: String
    /// How many specifiers had no argument and were left empty.
    public var missingArguments: Int
    /// Whether the text was cut at ``LocalizedFormat/largestResult``.
    public var truncated: Bool
  }

  /// The conversions that take an argument.
  private static let conversions = Set("@dDiuUoOxXfFeEgGaAcCsSp".unicodeScalars)
  /// Characters that may appear between `%` and a conversion (after any `n$`).
  private static let modifiers = Set("-+ #0'.123456789hlqLztj".unicodeScalars)

  /// `format` with its specifiers replaced by `arguments`.
  public static func format(_ format: String, arguments: [String]) -> Result {
    let scalars = Array(format.unicodeScalars)
    var out = String.UnicodeScalarView()
    var count = 0
    var missing = 0
    var truncated = false
    var next = 0
    var index = 0

    func append<S: Sequence<Unicode.Scalar>>(_ text: S) -> Bool {
      for scalar in text {
        guard count < largestResult else {
          truncated = true
          return false
        }
        out.append(scalar)
        count += 1
      }
      return true
    }

    while index < scalars.count {
      let scalar = scalars[index]
      guard scalar == "%" else {
        guard append(CollectionOfOne(scalar)) else { break }
        index += 1
        continue
      }
      if index + 1 < scalars.count, scalars[index + 1] == "%" {
        guard append(CollectionOfOne("%")) else { break }
        index += 2
        continue
      }
      // An optional position: digits then `$`.
      var cursor = index + 1
      var position: Int?
      var digitsEnd = cursor
      var value = 0
      while digitsEnd < scalars.count, let digit = decimal(scalars[digitsEnd]) {
        value = min(value * 10 + digit, Int(Int32.max))
        digitsEnd += 1
      }
      if digitsEnd > cursor, digitsEnd < scalars.count, scalars[digitsEnd] == "$" {
        position = value
        cursor = digitsEnd + 1
      }
      while cursor < scalars.count, modifiers.contains(scalars[cursor]) { cursor += 1 }
      guard cursor < scalars.count, conversions.contains(scalars[cursor]) else {
        // Not a specifier: keep the `%` and go on after it.
        guard append(CollectionOfOne("%")) else { break }
        index += 1
        continue
      }
      let argument: Int
      if let position {
        argument = position - 1
      } else {
        argument = next
        next += 1
      }
      if arguments.indices.contains(argument) {
        guard append(arguments[argument].unicodeScalars) else { break }
      } else {
        missing += 1
      }
      index = cursor + 1
    }
    return Result(text: String(out), missingArguments: missing, truncated: truncated)
  }

  private static func decimal(_ scalar: Unicode.Scalar) -> Int? {
    ("0"..."9").contains(scalar) ? Int(scalar.value - 0x30) : nil
  }
}
