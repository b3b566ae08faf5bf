import AttachmentKit

/// A JSON value with ordered object keys, written without Foundation.
indirect enum JSONValue: Equatable {
  case string(String)
  case int(Int64)
  case double(Double)
  case bool(Bool)
  case null
  case array([JSONValue])
  case object([(String, JSONValue)])

  /// The compact JSON text (one line).
  var text: String {
    var out = ""
    write(into: &out)
    return out
  }

  private func write(into out: inout String) {
    switch self {
    case .string(let value): Self.writeString(value, into: &out)
    case .int(let value): out += String(value)
    case .double(let value):
      out += value.isFinite ? String(value) : "null"
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    case .array(let values):
      out += "["
      for (index, value) in values.enumerated() {
        if index > 0 { out += "," }
        value.write(into: &out)
      }
      out += "]"
    case .object(let fields):
      out += "{"
      for (index, (key, value)) in fields.enumerated() {
        if index > 0 { out += "," }
        Self.writeString(key, into: &out)
        out += ":"
        value.write(into: &out)
      }
      out += "}"
    }
  }

  private static func writeString(_ text: String, into out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        // Controls and bidi overrides (as on the terminal), and the line and paragraph
        // separators some JSON readers take for line ends: never raw, so no terminal or log
        // viewer that shows the line can be steered by it.
        if Redaction.isControl(scalar) || scalar.value == 0x2028 || scalar.value == 0x2029 {
          let hex = String(scalar.value, radix: 16)
          out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }

  static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.text == rhs.text }
}

/// Builds an ordered JSON object, leaving out fields without a value.
struct JSONObject {
  private(set) var fields: [(String, JSONValue)] = []

  mutating func set(_ key: String, _ value: String?) {
    if let value { fields.append((key, .string(value))) }
  }

  mutating func set(_ key: String, _ value: Int64?) {
    if let value { fields.append((key, .int(value))) }
  }

  mutating func set(_ key: String, _ value: Int?) {
    if let value { fields.append((key, .int(Int64(value)))) }
  }

  mutating func set(_ key: String, _ value: Double?) {
    if let value { fields.append((key, .double(value))) }
  }

  mutating func set(_ key: String, _ value: Bool?) {
    if let value { fields.append((key, .bool(value))) }
  }

  mutating func set(_ key: String, _ value: JSONValue?) {
    if let value { fields.append((key, value)) }
  }

  var value: JSONValue { .object(fields) }
}
