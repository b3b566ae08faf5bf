/// A JSON value written without Foundation, the one writer every face uses (the command line's
/// JSON lines, the extension runner's output, the benchmarks' report), so they escape alike.
///
/// Object keys keep the order they are given in. Strings escape `"` and `\`, every C0, DEL
/// and C1 control and bidirectional override (``Redaction/isControl(_:)``), and U+2028/U+2029,
/// so no terminal or log viewer showing a line can be steered by what a server or payload sent;
/// Swift strings hold invalid UTF-8 as U+FFFD, so the text is always valid UTF-8. Non-finite
/// numbers are written as `null`.
public indirect enum JSON: Sendable, Equatable {
  /// A string.
  case string(String)
  /// A whole number.
  case int(Int64)
  /// Any other number (`null` when not finite).
  case double(Double)
  /// `true` or `false`.
  case bool(Bool)
  /// `null`.
  case null
  /// An array.
  case array([JSON])
  /// An object, its keys in the order given.
  case object([(key: String, value: JSON)])

  /// The value on one line, with no spaces.
  public var text: String {
    var out = ""
    write(into: &out, indent: nil, depth: 0)
    return out
  }

  /// The value over several lines, indented by `spaces` per level (`"key": value`).
  public func prettyText(spaces: Int = 2) -> String {
    var out = ""
    write(into: &out, indent: String(repeating: " ", count: spaces), depth: 0)
    return out
  }

  /// `text` as a JSON string literal, quotes included.
  public static func quoted(_ text: String) -> String {
    var out = ""
    writeString(text, into: &out)
    return out
  }

  /// Appends `text` as a JSON string literal, quotes included, to `out`: for writers that build
  /// a line field by field without making a value first (the access log).
  public static func appendQuoted(_ text: String, to out: inout String) {
    writeString(text, into: &out)
  }

  /// Two values are equal when they write the same text.
  public static func == (lhs: JSON, rhs: JSON) -> Bool { lhs.text == rhs.text }

  private func write(into out: inout String, indent: String?, depth: Int) {
    switch self {
    case .string(let value): Self.writeString(value, into: &out)
    case .int(let value): out += String(value)
    case .double(let value): out += value.isFinite ? String(value) : "null"
    case .bool(let value): out += value ? "true" : "false"
    case .null: out += "null"
    case .array(let values):
      writeContainer(
        "[", "]", count: values.count, into: &out, indent: indent, depth: depth
      ) { index, out in values[index].write(into: &out, indent: indent, depth: depth + 1) }
    case .object(let fields):
      writeContainer(
        "{", "}", count: fields.count, into: &out, indent: indent, depth: depth
      ) { index, out in
        Self.writeString(fields[index].key, into: &out)
        out += indent == nil ? ":" : ": "
        fields[index].value.write(into: &out, indent: indent, depth: depth + 1)
      }
    }
  }

  private func writeContainer(
    _ open: String, _ close: String, count: Int, into out: inout String, indent: String?, depth: Int,
    element: (Int, inout String) -> Void
  ) {
    out += open
    guard count > 0 else {
      out += close
      return
    }
    for index in 0..<count {
      if index > 0 { out += "," }
      if let indent { out += "\n" + String(repeating: indent, count: depth + 1) }
      element(index, &out)
    }
    if let indent { out += "\n" + String(repeating: indent, count: depth) }
    out += close
  }

  private static func writeString(_ text: String, into out: inout String) {
    out += "\""
    // Printable ASCII without a quote or a backslash (nearly every string written) is copied
    // whole: the escaping below appends scalar by scalar, which was most of an access-log
    // line's cost.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
      out += text
      out += "\""
      return
    }
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
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
}
