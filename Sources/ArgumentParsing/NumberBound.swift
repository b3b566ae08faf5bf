/// Which numbers a numeric option accepts: the bound of an ``OptionKey`` made by
/// ``OptionKey/integer(long:short:valueName:bound:help:)`` and its siblings.
public enum NumberBound: Sendable, Equatable, CustomStringConvertible {
  /// Any number, negative ones included.
  case any
  /// Zero or more.
  case nonNegative
  /// More than zero.
  case positive

  /// The case's name (`any`, `nonNegative`, `positive`): part of an option's reading. Written
  /// out, since interpolating an enum without it reflects on it (`Mirror`), which was a tenth of a
  /// command-line hit's own work when every option was declared.
  public var description: String {
    switch self {
    case .any: "any"
    case .nonNegative: "nonNegative"
    case .positive: "positive"
    }
  }

  /// The phrase used in error messages, such as "a positive whole number" for `noun` "whole number".
  func describe(_ noun: String) -> String {
    switch self {
    case .any: "a \(noun)"
    case .nonNegative: "a non-negative \(noun)"
    case .positive: "a positive \(noun)"
    }
  }

  /// Whether a number with this sign satisfies the bound.
  func admits(isNegative: Bool, isZero: Bool) -> Bool {
    switch self {
    case .any: true
    case .nonNegative: !isNegative
    case .positive: !isNegative && !isZero
    }
  }
}
