/// Typed readings of option values, each throwing a ``UsageError`` that names the option, says
/// what it expects and quotes what it got: `--concurrency expects a positive whole number, got 'abc'`.
///
/// Each returns `nil` when the option was not given, and reads the last value when it was given
/// more than once. Each stops the program if no such option is declared.
extension ParsedArguments {
  /// The option `--long` as an `Int` within `bound`. Throws on anything but an optionally
  /// signed run of digits, on a value outside `bound`, and on one too large for `Int`.
  public func int(_ long: String, _ bound: NumberBound = .any) throws(UsageError) -> Int? {
    try wholeNumber(long, bound, as: Int.self)
  }

  /// The option `--long` as an `Int64` within `bound`; fails as ``int(_:_:)`` does.
  public func int64(_ long: String, _ bound: NumberBound = .any) throws(UsageError) -> Int64? {
    try wholeNumber(long, bound, as: Int64.self)
  }

  /// The option `--long` as a finite `Double` within `bound` (`2.5`, `.5`, `1e3`). Throws on
  /// `nan`, `inf`, hex, anything else that is not a decimal number, and a value outside `bound`.
  public func double(_ long: String, _ bound: NumberBound = .any) throws(UsageError) -> Double? {
    guard let text = string(long) else { return nil }
    let expected = "--\(long) expects \(bound.describe("number")), got '\(text)'"
    switch NumberText.decimal(text) {
    case .value(let value) where bound.admits(isNegative: value < 0, isZero: value == 0):
      return value
    case .outOfRange: throw usageError(expected + " (out of range)")
    case .value, .malformed: throw usageError(expected)
    }
  }

  /// The option `--long` as a number of bytes (`500`, `10MB`, `5MiB`; see ``ByteCount``).
  /// Throws on anything ``ByteCount/parse(_:)`` rejects, and on zero when `bound` is `.positive`.
  public func byteCount(_ long: String, _ bound: NumberBound = .nonNegative) throws(UsageError)
    -> Int64?
  {
    guard let text = string(long) else { return nil }
    guard let bytes = ByteCount.parse(text), bound.admits(isNegative: false, isZero: bytes == 0) else {
      let noun = bound == .positive ? "a positive byte size" : "a byte size"
      throw usageError("--\(long) expects \(noun) such as 500, 10MB or 5MiB, got '\(text)'")
    }
    return bytes
  }

  /// The option `--long`, which must be one of `choices` (compared exactly). Throws otherwise,
  /// listing the choices and suggesting the closest one when it is near.
  public func choice(_ long: String, from choices: [String]) throws(UsageError) -> String? {
    guard let text = string(long) else { return nil }
    guard choices.contains(text) else {
      let listed = choices.joined(separator: ", ")
      let hint = Suggestion.closest(to: text, among: choices).map { " (did you mean '\($0)'?)" } ?? ""
      throw usageError("--\(long) expects one of \(listed); got '\(text)'\(hint)")
    }
    return text
  }

  /// Reads the option `--long` as a whole number of type `Value` within `bound`.
  private func wholeNumber<Value: FixedWidthInteger>(
    _ long: String, _ bound: NumberBound, as type: Value.Type
  ) throws(UsageError) -> Value? {
    guard let text = string(long) else { return nil }
    let expected = "--\(long) expects \(bound.describe("whole number")), got '\(text)'"
    switch NumberText.wholeNumber(text, as: type) {
    case .value(let value) where bound.admits(isNegative: value < 0, isZero: value == 0):
      return value
    case .outOfRange: throw usageError(expected + " (out of range)")
    case .value, .malformed: throw usageError(expected)
    }
  }
}
