import Foundation

/// An APNs payload, read field by field without ever trusting a field's type.
///
/// Only the top level must be a JSON object (anything else is not a payload at all). Every other
/// field is optional: one of the wrong type is ignored and noted in ``problems``, exactly as a
/// careful extension treats a payload it did not write.
public struct NotificationPayload: Sendable, Equatable {
  /// The whole payload, `aps` included: what iOS exposes as `content.userInfo`.
  public var userInfo: [String: JSONValue]
  /// `aps.alert.title` (or empty).
  public var title: String
  /// `aps.alert.subtitle` (or empty).
  public var subtitle: String
  /// `aps.alert.body`, or `aps.alert` itself when it is a string (or empty).
  public var body: String
  /// `aps.category` (or empty): iOS's `categoryIdentifier`.
  public var category: String
  /// `title-loc-key`, `subtitle-loc-key` and `loc-key` with their arguments (empty when the
  /// alert has none).
  public var localization = AlertLocalization()
  /// Whether `aps.mutable-content` is 1, the only thing that makes iOS launch the extension.
  public var isMutable: Bool
  /// Fields that were present but unusable, one sentence each.
  public var problems: [String]

  /// Why a payload could not be read at all.
  public enum ReadError: Error, Equatable, CustomStringConvertible {
    /// The bytes are not JSON.
    case notJSON
    /// The JSON is not an object.
    case notAnObject(String)

    /// One sentence for standard error.
    public var description: String {
      switch self {
      case .notJSON: "the payload is not valid JSON"
      case .notAnObject(let kind): "the payload is \(kind), not a JSON object"
      }
    }
  }

  /// Reads a payload from JSON bytes, first replacing `{BASE}` in every string with
  /// `baseURL` when one is given.
  /// - Throws: ``ReadError`` when the bytes are not a JSON object.
  public static func read(_ data: Data, baseURL: String? = nil) throws(ReadError) -> NotificationPayload {
    guard var value = JSONValue(data: data) else { throw .notJSON }
    if let baseURL { value = value.replacing(Self.basePlaceholder, with: baseURL) }
    guard let fields = value.objectValue else { throw .notAnObject(value.kindDescription) }
    var payload = NotificationPayload(userInfo: fields)
    if value.contains(Self.basePlaceholder) {
      payload.problems.append("strings still hold the \(Self.basePlaceholder) placeholder: pass --base-url")
    }
    return payload
  }

  /// The placeholder that `--base-url` replaces in sample payloads.
  public static let basePlaceholder = "{BASE}"

  /// Reads the fields iOS reads from an already parsed payload object.
  public init(userInfo: [String: JSONValue]) {
    self.userInfo = userInfo
    var problems: [String] = []
    var aps: [String: JSONValue] = [:]
    if let value = userInfo["aps"] {
      if let fields = value.objectValue {
        aps = fields
      } else {
        problems.append("aps is \(value.kindDescription), not an object: ignored")
      }
    }

    var title = ""
    var subtitle = ""
    var body = ""
    switch aps["alert"] {
    case .none: break
    case .string(let text)?: body = text
    case .object(let alert)?:
      title = Self.string(alert, "title", at: "aps.alert", problems: &problems)
      subtitle = Self.string(alert, "subtitle", at: "aps.alert", problems: &problems)
      body = Self.string(alert, "body", at: "aps.alert", problems: &problems)
      localization = AlertLocalization.read(alert, problems: &problems)
    case let other?:
      problems.append("aps.alert is \(other.kindDescription), not a string or an object: ignored")
    }
    self.title = title
    self.subtitle = subtitle
    self.body = body
    category = Self.string(aps, "category", at: "aps", problems: &problems)

    switch aps["mutable-content"] {
    case .none:
      isMutable = false
    case .integer(let flag)?:
      isMutable = flag == 1
    case .bool(let flag)?:
      isMutable = flag
    case let other?:
      isMutable = false
      problems.append("aps.mutable-content is \(other.kindDescription), not 1: the extension is not run")
    }
    self.problems = problems
  }

  /// The notification content iOS builds from the payload before any extension runs.
  public var originalContent: NotificationContent {
    NotificationContent(
      title: title, subtitle: subtitle, body: body, categoryIdentifier: category, userInfo: userInfo)
  }

  /// The string field `key` of `fields`, or empty (noting a problem when it has another type).
  static func string(
    _ fields: [String: JSONValue], _ key: String, at path: String, problems: inout [String]
  ) -> String {
    guard let value = fields[key] else { return "" }
    guard let text = value.stringValue else {
      problems.append("\(path).\(key) is \(value.kindDescription), not a string: ignored")
      return ""
    }
    return text
  }
}
