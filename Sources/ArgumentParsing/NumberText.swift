/// Strict readings of numbers as typed on a command line: ASCII digits only, no spaces, no hex.
enum NumberText {
  /// What reading a number gave.
  enum Reading<Value> {
    /// A number.
    case value(Value)
    /// Well formed, but too large (or too small) to represent.
    case outOfRange
    /// Not a number of this sort at all.
    case malformed
  }

  /// Reads an optionally signed run of decimal digits (`42`, `-7`, `+3`).
  static func wholeNumber<Value: FixedWidthInteger>(_ text: String, as _: Value.Type) -> Reading<Value> {
    let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
    guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return .malformed }
    guard let value = Value(text, radix: 10) else { return .outOfRange }
    return .value(value)
  }

  /// Reads a finite decimal number (`2.5`, `-1`, `.5`, `1e3`); `nan`, `inf` and hex are malformed.
  static func decimal(_ text: String) -> Reading<Double> {
    let allowed = text.allSatisfy { $0.isASCIIDigit || "+-.eE".contains($0) }
    guard allowed, text.contains(where: \.isASCIIDigit), let value = Double(text) else {
      return .malformed
    }
    return value.isFinite ? .value(value) : .outOfRange
  }
}

extension NumberText {
  /// The units a duration may carry, longest suffix first, with their length in seconds.
  static let durationUnits: [(suffix: String, seconds: Double)] = [
    ("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400),
  ]

  /// Reads a duration in seconds: a decimal number of seconds (`25`, `2.5`), or one with a unit
  /// (`500ms`, `2s`, `1.5m`, `1h`, `7d`); `nan`, `inf`, hex and two units are malformed.
  static func duration(_ text: String) -> Reading<Double> {
    for unit in durationUnits where text.hasSuffix(unit.suffix) {
      let number = String(text.dropLast(unit.suffix.count))
      // (`ms` is tried before `s` and `m`: "500ms" is never read as 500m followed by "s")
      guard number.last?.isASCIIDigit == true || number.last == "." else { continue }
      switch decimal(number) {
      case .value(let value):
        let seconds = value * unit.seconds
        return seconds.isFinite ? .value(seconds) : .outOfRange
      case .outOfRange: return .outOfRange
      case .malformed: return .malformed
      }
    }
    return decimal(text)
  }
}

extension Character {
  /// Whether this is one of `0` to `9`.
  var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
