/// One localizable alert field: the key into the app's strings and its arguments.
public struct LocalizedText: Sendable, Equatable {
  /// `title-loc-key`, `subtitle-loc-key` or `loc-key`.
  public var key: String
  /// The matching `…-loc-args`, as text.
  public var arguments: [String]

  /// Makes a field.
  public init(key: String, arguments: [String] = []) {
    self.key = key
    self.arguments = arguments
  }
}

/// The localizable fields of `aps.alert`: `title-loc-key`/`title-loc-args`,
/// `subtitle-loc-key`/`subtitle-loc-args` and `loc-key`/`loc-args`.
public struct AlertLocalization: Sendable, Equatable {
  /// The title's key and arguments.
  public var title: LocalizedText?
  /// The subtitle's key and arguments.
  public var subtitle: LocalizedText?
  /// The body's key and arguments.
  public var body: LocalizedText?

  /// Makes a localization.
  public init(title: LocalizedText? = nil, subtitle: LocalizedText? = nil, body: LocalizedText? = nil) {
    self.title = title
    self.subtitle = subtitle
    self.body = body
  }

  /// Whether the alert asks for no localization at all.
  public var isEmpty: Bool { title == nil && subtitle == nil && body == nil }

  /// Reads the fields from an `aps.alert` object. A key of the wrong type is ignored; an
  /// argument that is a number is used as its text (iOS expects strings); any other argument
  /// becomes empty. Each is noted in `problems`.
  static func read(_ alert: [String: JSONValue], problems: inout [String]) -> AlertLocalization {
    func field(_ prefix: String) -> LocalizedText? {
      let keyName = prefix + "loc-key"
      let argumentsName = prefix + "loc-args"
      guard let value = alert[keyName] else {
        if alert[argumentsName] != nil {
          problems.append("aps.alert.\(argumentsName) without \(keyName): ignored")
        }
        return nil
      }
      guard let key = value.stringValue else {
        problems.append("aps.alert.\(keyName) is \(value.kindDescription), not a string: ignored")
        return nil
      }
      var arguments: [String] = []
      switch alert[argumentsName] {
      case .none: break
      case .array(let items)?:
        for (index, item) in items.enumerated() {
          switch item {
          case .string(let text): arguments.append(text)
          case .integer(let number): arguments.append(String(number))
          case .double(let number): arguments.append(String(number))
          default:
            problems.append(
              "aps.alert.\(argumentsName)[\(index)] is \(item.kindDescription), not a string: left empty")
            arguments.append("")
          }
        }
      case let other?:
        problems.append("aps.alert.\(argumentsName) is \(other.kindDescription), not an array: ignored")
      }
      return LocalizedText(key: key, arguments: arguments)
    }
    return AlertLocalization(title: field("title-"), subtitle: field("subtitle-"), body: field(""))
  }

  /// What resolving the fields against a table gave.
  public struct Resolution: Sendable, Equatable {
    /// The localized title, subtitle and body (`nil` for a field without a key).
    public var title: String?
    /// The localized subtitle.
    public var subtitle: String?
    /// The localized body.
    public var body: String?
    /// Keys the table does not have: shown as they are (formatted with their arguments).
    public var missingKeys: [String] = []
    /// Keys whose value came from a fallback language.
    public var fallbackKeys: [String] = []
    /// One sentence per field whose specifiers lacked arguments or whose text was cut.
    public var formatNotes: [String] = []
  }

  /// The fields localized with `table` (`nil`: no table, so every key is missing), as iOS
  /// does: the key's value, else the key itself, used as a format for the arguments
  /// (see ``LocalizedFormat``).
  public func resolve(with table: LocalizationTable?) -> Resolution {
    var resolution = Resolution()
    func localize(_ text: LocalizedText?, _ name: String) -> String? {
      guard let text else { return nil }
      let format: String
      if let value = table?.entries[text.key] {
        format = value
        if table?.fallbacks.contains(text.key) == true { resolution.fallbackKeys.append(text.key) }
      } else {
        format = text.key
        resolution.missingKeys.append(text.key)
      }
      let result = LocalizedFormat.format(format, arguments: text.arguments)
      if result.missingArguments > 0 {
        resolution.formatNotes.append(
          "\(name) \(text.key): \(result.missingArguments) specifier(s) without an argument left empty")
      }
      if result.truncated {
        resolution.formatNotes.append(
          "\(name) \(text.key): cut at \(LocalizedFormat.largestResult) characters")
      }
      return result.text
    }
    resolution.title = localize(title, "title")
    resolution.subtitle = localize(subtitle, "subtitle")
    resolution.body = localize(body, "body")
    return resolution
  }
}
