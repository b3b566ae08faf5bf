import AttachmentKit

/// Builds an ordered JSON object, leaving out fields without a value.
struct JSONObject {
  private(set) var fields: [(key: String, value: JSON)] = []

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

  mutating func set(_ key: String, _ value: JSON?) {
    if let value { fields.append((key, value)) }
  }

  var value: JSON { .object(fields) }
}
