import AttachmentKit
import Foundation

/// A JSON value that can cross concurrency domains: the payload as the extension holds it.
///
/// Foundation's `JSONSerialization` hands back `Any`; ``JSONValue/init(foundation:)`` turns that
/// into this tree once, with `as?` casts only, so nothing downstream ever casts a payload field.
public indirect enum JSONValue: Sendable, Equatable {
  /// A string.
  case string(String)
  /// A number without a fractional part that fits in 64 bits.
  case integer(Int64)
  /// Any other number.
  case double(Double)
  /// `true` or `false`.
  case bool(Bool)
  /// `null`.
  case null
  /// An array.
  case array([JSONValue])
  /// An object.
  case object([String: JSONValue])

  /// Converts what `JSONSerialization.jsonObject(with:)` returned; `nil` for anything that is
  /// not a JSON value (it cannot happen for its output, but the cast is checked all the same).
  public init?(foundation value: Any) {
    if let text = value as? String {
      self = .string(text)
    } else if let number = value as? NSNumber {
      self = Self.number(number)
    } else if value is NSNull {
      self = .null
    } else if let list = value as? [Any] {
      var items: [JSONValue] = []
      items.reserveCapacity(list.count)
      for item in list {
        guard let converted = JSONValue(foundation: item) else { return nil }
        items.append(converted)
      }
      self = .array(items)
    } else if let dictionary = value as? [String: Any] {
      var fields: [String: JSONValue] = [:]
      for (key, item) in dictionary {
        guard let converted = JSONValue(foundation: item) else { return nil }
        fields[key] = converted
      }
      self = .object(fields)
    } else {
      return nil
    }
  }

  /// Parses JSON text; `nil` when it is not valid JSON.
  public init?(data: Data) {
    guard let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
      return nil
    }
    self.init(foundation: parsed)
  }

  /// Tells booleans, whole numbers and other numbers apart. `JSONSerialization` stores
  /// `true`/`false` as a `char` number and integers as integer numbers.
  private static func number(_ number: NSNumber) -> JSONValue {
    let kind = String(cString: number.objCType)
    if kind == "c" || kind == "B" { return .bool(number.boolValue) }
    if kind == "d" || kind == "f" {
      let value = number.doubleValue
      if value.rounded() == value, let whole = Int64(exactly: value) { return .integer(whole) }
      return .double(value)
    }
    return .integer(number.int64Value)
  }

  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// The fields, when this is an object.
  public var objectValue: [String: JSONValue]? {
    if case .object(let fields) = self { return fields }
    return nil
  }

  /// The items, when this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let items) = self { return items }
    return nil
  }

  /// The field `key`, when this is an object that has it.
  public subscript(key: String) -> JSONValue? {
    objectValue?[key]
  }

  /// A short name of the value's kind, for messages: "a string", "an object"…
  public var kindDescription: String {
    switch self {
    case .string: "a string"
    case .integer, .double: "a number"
    case .bool: "a boolean"
    case .null: "null"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// Whether any string value in the tree contains `text`.
  public func contains(_ text: String) -> Bool {
    switch self {
    case .string(let value): value.contains(text)
    case .array(let items): items.contains { $0.contains(text) }
    case .object(let fields): fields.values.contains { $0.contains(text) }
    case .integer, .double, .bool, .null: false
    }
  }

  /// The same tree with `placeholder` replaced by `replacement` in every string value (keys are
  /// left alone).
  public func replacing(_ placeholder: String, with replacement: String) -> JSONValue {
    switch self {
    case .string(let text): .string(text.replacingOccurrences(of: placeholder, with: replacement))
    case .array(let items): .array(items.map { $0.replacing(placeholder, with: replacement) })
    case .object(let fields): .object(fields.mapValues { $0.replacing(placeholder, with: replacement) })
    case .integer, .double, .bool, .null: self
    }
  }
}

extension JSONValue {
  /// The value for AttachmentKit's writer, object keys sorted so the output is stable.
  public var json: JSON {
    switch self {
    case .string(let text): .string(text)
    case .integer(let value): .int(value)
    case .double(let value): .double(value)
    case .bool(let value): .bool(value)
    case .null: .null
    case .array(let items): .array(items.map(\.json))
    case .object(let fields): .object(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
    }
  }
}
