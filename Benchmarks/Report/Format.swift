import AttachmentKit
import Foundation

/// Number formatting shared by the table, the JSON and the HTML.
enum Format {
  /// A duration in seconds with a unit that suits it: `12.3 µs`, `4.56 ms`, `1.23 s`.
  static func seconds(_ value: Double) -> String {
    let magnitude = abs(value)
    if magnitude < 1e-3 { return String(format: "%.1f µs", value * 1e6) }
    if magnitude < 1 { return String(format: "%.2f ms", value * 1e3) }
    return String(format: "%.2f s", value)
  }

  /// A duration as a share of the 30 s budget: `0.0001 %`.
  static func budgetShare(_ value: Double) -> String {
    let percent = value / budgetSeconds * 100
    if percent >= 1 { return String(format: "%.1f %%", percent) }
    return String(format: "%.2g %%", percent)
  }

  /// A ratio with two decimals and a `×`.
  /// One side of a ratio, in its unit.
  static func measure(_ value: Double, _ unit: RatioUnit) -> String {
    switch unit {
    case .seconds: seconds(value)
    case .bytes: bytes(value)
    case .count: String(Int(value.rounded()))
    }
  }

  static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

  /// A value in its unit.
  static func value(_ row: ValueRow) -> String {
    switch row.unit {
    case .bytes: return bytes(row.value)
    case .mebibytes: return String(format: "%.2f MiB", row.value / 1_048_576)
    case .perSecond: return String(format: "%.0f files/s", row.value)
    case .milliseconds: return seconds(row.value)
    case .count: return String(format: "%.0f", row.value)
    }
  }

  /// A byte count, with KiB/MiB when large: `65,536 B (64.0 KiB)`.
  static func bytes(_ value: Double) -> String {
    let whole = String(format: "%.0f B", value)
    if abs(value) >= 1_048_576 { return whole + String(format: " (%.1f MiB)", value / 1_048_576) }
    if abs(value) >= 1024 { return whole + String(format: " (%.1f KiB)", value / 1024) }
    return whole
  }

  /// A number for JSON: integers without a fraction, others with up to 6 significant
  /// decimals; non-finite values as `null`.
  static func json(_ value: Double) -> String {
    guard value.isFinite else { return "null" }
    if value == value.rounded(), abs(value) < 1e15 { return String(format: "%.0f", value) }
    return String(format: "%.6g", value)
  }

  /// `text` as a JSON string literal (the library's writer, so every face escapes alike).
  static func jsonString(_ text: String) -> String { JSON.quoted(text) }

  /// `text` escaped for HTML text and attributes.
  static func html(_ text: String) -> String {
    var out = ""
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      default: out.append(character)
      }
    }
    return out
  }

  /// `text` padded with spaces to `width` characters (never cut).
  static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }
}
