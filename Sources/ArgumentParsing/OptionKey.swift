/// An option that takes a value, `--long VALUE`, `--long=VALUE` or `-s VALUE`, and how its text
/// becomes a `Value`: the key it is declared and read by (see ``ArgumentKey``).
///
/// Make one with a factory for its type: ``option(long:short:valueName:help:)`` for text,
/// ``integer(long:short:valueName:bound:help:)``, ``number(long:short:valueName:bound:help:)``,
/// ``byteCount(long:short:valueName:bound:help:)`` and ``choice(long:short:valueName:help:)``.
/// The value is converted when it is read, the last one given winning, so a bad value is a
/// ``UsageError`` that names the option, says what it expects and quotes what it got:
/// `--concurrency expects a positive whole number, got 'abc'`.
///
/// A value that starts with `-` (other than `-` itself and negative numbers) must use the
/// `--long=VALUE` form; otherwise parsing reports the value as missing.
public struct OptionKey<Value: Sendable>: ArgumentKey {
  /// The declaration, of kind ``ArgumentSpec/Kind/option``.
  public private(set) var spec: ArgumentSpec
  /// Turns the text given into a value, or says what is wrong with it; the second argument is
  /// what the message calls the value's source (`--long`, or the environment variable it came
  /// from).
  let convert: @Sendable (String, String) -> Result<Value, InvalidValue>

  /// Declares the option `--long` that `convert` reads as `reading` describes.
  private init(
    long: String, short: Character?, valueName: String, help: String, reading: String,
    choices: [String] = [], convert: @escaping @Sendable (String, String) -> Result<Value, InvalidValue>
  ) {
    spec = .option(
      long: long, short: short, valueName: valueName, help: help, reading: reading, choices: choices)
    self.convert = convert
  }
}

extension OptionKey {
  /// The same option, also answering to the older long names `names` (without dashes): one
  /// name for each option across commands, and scripts that used the old one still work.
  public func aliased(_ names: String...) -> OptionKey {
    var copy = self
    copy.spec.aliases += names
    return copy
  }
}

extension OptionKey where Value: Comparable & AdditiveArithmetic {
  /// Declares an option whose text `read` turns into a number within `bound`, for the numeric
  /// factories: a malformed, out-of-range or out-of-bound value is a usage error that names the
  /// option, says what it expects (`bound` and `noun`, then `hint`) and quotes what it got.
  fileprivate init(
    long: String, short: Character?, valueName: String, bound: NumberBound, help: String, reading: String,
    noun: String, hint: String = "", read: @escaping @Sendable (String) -> NumberText.Reading<Value>
  ) {
    self.init(long: long, short: short, valueName: valueName, help: help, reading: reading) { text, subject in
      let expected = "\(subject) expects \(bound.describe(noun))\(hint), got '\(text)'"
      switch read(text) {
      case .value(let value) where bound.admits(isNegative: value < .zero, isZero: value == .zero):
        return .success(value)
      case .outOfRange: return .failure(InvalidValue(message: expected + " (out of range)"))
      case .value, .malformed: return .failure(InvalidValue(message: expected))
      }
    }
  }
}

/// Why an option's text is no value of its key's type: the message of the usage error.
struct InvalidValue: Error {
  /// What the option expects and what it got, in one line.
  let message: String
}

extension OptionKey where Value == String {
  /// Declares an option whose value is its text as given. Reading it cannot fail.
  public static func option(
    long: String, short: Character? = nil, valueName: String = "VALUE", help: String
  ) -> OptionKey {
    OptionKey(long: long, short: short, valueName: valueName, help: help, reading: "text") { text, _ in
      .success(text)
    }
  }

  /// Declares an option whose value is one of the words `choices` (what help, the manual and
  /// the completions offer); reading any other word is a usage error listing them, with the
  /// closest one as a hint. For a set of words only known as text (names of a table), where
  /// ``choice(long:short:valueName:help:)`` needs an enumeration.
  public static func oneOf(
    long: String, short: Character? = nil, valueName: String = "VALUE", choices: [String], help: String
  ) -> OptionKey {
    OptionKey(long: long, short: short, valueName: valueName, help: help, reading: "text", choices: choices) {
      text, subject in
      if choices.contains(text) { return .success(text) }
      let hint = Suggestion.closest(to: text, among: choices).map { " (did you mean '\($0)'?)" } ?? ""
      let listed = choices.joined(separator: ", ")
      return .failure(InvalidValue(message: "\(subject) expects one of \(listed); got '\(text)'\(hint)"))
    }
  }
}

extension OptionKey where Value: FixedWidthInteger {
  /// Declares an option whose value is a whole number within `bound`. Reading it throws on
  /// anything but an optionally signed run of ASCII digits, on a value outside `bound`, and on
  /// one too large for `Value`.
  public static func integer(
    long: String, short: Character? = nil, valueName: String = "N", bound: NumberBound = .any,
    help: String
  ) -> OptionKey {
    OptionKey(
      long: long, short: short, valueName: valueName, bound: bound, help: help,
      reading: "whole number \(Value.self) \(bound)", noun: "whole number"
    ) { text in
      NumberText.wholeNumber(text, as: Value.self)
    }
  }
}

extension OptionKey where Value == Double {
  /// Declares an option whose value is a finite decimal number within `bound` (`2.5`, `.5`,
  /// `1e3`). Reading it throws on `nan`, `inf`, hex, anything else that is not a decimal
  /// number, and a value outside `bound`.
  public static func number(
    long: String, short: Character? = nil, valueName: String = "VALUE", bound: NumberBound = .any,
    help: String
  ) -> OptionKey {
    OptionKey(
      long: long, short: short, valueName: valueName, bound: bound, help: help, reading: "number \(bound)",
      noun: "number", read: NumberText.decimal)
  }

  /// Declares an option whose value is a duration in seconds: a number of seconds (`25`, `2.5`),
  /// or a number with a unit, `ms`, `s`, `m`, `h` or `d` (`500ms`, `2s`, `1m`), as `curl
  /// --max-time` takes seconds and `sleep` takes units. Reading it throws on anything else and
  /// on a value outside `bound`.
  public static func duration(
    long: String, short: Character? = nil, valueName: String = "DURATION", bound: NumberBound = .positive,
    help: String
  ) -> OptionKey {
    OptionKey(
      long: long, short: short, valueName: valueName, bound: bound, help: help, reading: "duration \(bound)",
      noun: "duration", hint: " in seconds or with a unit (500ms, 2s, 1m, 1h)", read: NumberText.duration)
  }
}

extension OptionKey where Value == Int64 {
  /// Declares an option whose value is a number of bytes (`500`, `10MB`, `5MiB`; see
  /// ``ByteCount``). Reading it throws on anything ``ByteCount/parse(_:)`` rejects, and on zero
  /// when `bound` is `.positive`.
  public static func byteCount(
    long: String, short: Character? = nil, valueName: String = "BYTES", bound: NumberBound = .nonNegative,
    help: String
  ) -> OptionKey {
    OptionKey(
      long: long, short: short, valueName: valueName, help: help, reading: "byte count \(bound)"
    ) { text, subject in
      guard let bytes = ByteCount.parse(text), bound.admits(isNegative: false, isZero: bytes == 0) else {
        let noun = bound == .positive ? "a positive byte size" : "a byte size"
        return .failure(
          InvalidValue(message: "\(subject) expects \(noun) such as 500, 10MB or 5MiB, got '\(text)'"))
      }
      return .success(bytes)
    }
  }
}

extension OptionKey where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
  /// Declares an option whose value is one of `Value`'s cases, typed as its raw value (compared
  /// exactly). Reading anything else throws, listing the raw values in `allCases` order and
  /// suggesting the closest one when it is near.
  public static func choice(
    long: String, short: Character? = nil, valueName: String = "VALUE", help: String
  ) -> OptionKey {
    OptionKey(
      long: long, short: short, valueName: valueName, help: help, reading: "choice \(Value.self)",
      choices: Value.allCases.map(\.rawValue)
    ) { text, subject in
      if let value = Value(rawValue: text) { return .success(value) }
      let choices = Value.allCases.map(\.rawValue)
      let hint = Suggestion.closest(to: text, among: choices).map { " (did you mean '\($0)'?)" } ?? ""
      let listed = choices.joined(separator: ", ")
      return .failure(InvalidValue(message: "\(subject) expects one of \(listed); got '\(text)'\(hint)"))
    }
  }
}

/// What is wrong with an option's text, said by a ``OptionKey/parsed(long:short:valueName:help:expecting:parse:)``
/// key's parser (`'10.0.0.0/33' is neither`).
public struct OptionProblem: Error, Sendable {
  /// The detail, after what the option expects.
  public let detail: String

  /// A problem described by `detail`.
  public init(_ detail: String) {
    self.detail = detail
  }
}

extension OptionKey {
  /// Declares an option whose text `parse` reads, for a value no other factory reads (an
  /// address list, say). Reading it throws when `parse` fails, with the message
  /// `<option or variable> expects <expecting>: <detail>`.
  public static func parsed(
    long: String, short: Character? = nil, valueName: String = "VALUE", help: String, expecting: String,
    parse: @escaping @Sendable (String) -> Result<Value, OptionProblem>
  ) -> OptionKey {
    OptionKey(long: long, short: short, valueName: valueName, help: help, reading: "parsed \(Value.self)") {
      text, subject in
      parse(text).mapError { InvalidValue(message: "\(subject) expects \(expecting): \($0.detail)") }
    }
  }
}
