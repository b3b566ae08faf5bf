import Foundation

/// The Linux stand-in for `UNMutableNotificationContent`: what is finally shown.
public struct NotificationContent: Sendable, Equatable {
  /// The title.
  public var title: String
  /// The subtitle.
  public var subtitle: String
  /// The body text.
  public var body: String
  /// The category (`aps.category`), which picks the actions shown.
  public var categoryIdentifier: String
  /// The whole payload, as iOS keeps it.
  public var userInfo: [String: JSONValue]
  /// The attachments, in the order they are shown (the first is the thumbnail).
  public var attachments: [DeliveredAttachment]

  /// Makes content.
  public init(
    title: String = "", subtitle: String = "", body: String = "", categoryIdentifier: String = "",
    userInfo: [String: JSONValue] = [:], attachments: [DeliveredAttachment] = []
  ) {
    self.title = title
    self.subtitle = subtitle
    self.body = body
    self.categoryIdentifier = categoryIdentifier
    self.userInfo = userInfo
    self.attachments = attachments
  }
}

/// The Linux stand-in for `UNNotificationAttachment`.
public struct DeliveredAttachment: Sendable, Equatable, Encodable {
  /// The identifier (unique within the notification).
  public var identifier: String
  /// A `file://` URL whose name ends in the canonical extension of the type.
  public var url: String
  /// The UTI given as `UNNotificationAttachmentOptionsTypeHintKey`, e.g. `public.jpeg`.
  public var typeHint: String

  /// Makes an attachment.
  public init(identifier: String, url: String, typeHint: String) {
    self.identifier = identifier
    self.url = url
    self.typeHint = typeHint
  }

  /// The local path of ``url``.
  public var path: String {
    URL(string: url)?.path ?? url
  }
}

extension NotificationContent {
  /// The JSON written to standard output: the content's fields, plus the trace when given.
  public func json(trace: [TraceStep]? = nil) -> String {
    let document = Document(
      title: title, subtitle: subtitle, body: body, categoryIdentifier: categoryIdentifier,
      userInfo: userInfo, attachments: attachments, trace: trace)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(document), let text = String(data: data, encoding: .utf8) else {
      // Encoding plain strings and finite numbers cannot fail; keep the promise to deliver anyway.
      return #"{"title":"","subtitle":"","body":"","categoryIdentifier":"","userInfo":{},"attachments":[]}"#
    }
    return text
  }

  /// The shape of the JSON output.
  private struct Document: Encodable {
    let title: String
    let subtitle: String
    let body: String
    let categoryIdentifier: String
    let userInfo: [String: JSONValue]
    let attachments: [DeliveredAttachment]
    let trace: [TraceStep]?
  }
}
