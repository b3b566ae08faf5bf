import AttachmentKit
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
public struct DeliveredAttachment: Sendable, Equatable {
  /// The identifier (unique within the notification).
  public var identifier: String
  /// A `file://` URL whose name ends in the canonical extension of the type.
  public var url: String
  /// The UTI given as `UNNotificationAttachmentOptionsTypeHintKey`, e.g. `public.jpeg`.
  public var typeHint: String
  /// Where it came from when that was not the payload's own URL: an alternative
  /// (`fallback-urls[N]`) or the bundled image (`fallback-image`); `nil` otherwise.
  public var source: String?
  /// The thumbnail options given beside the type hint (`…ThumbnailClippingRectKey`,
  /// `…ThumbnailTimeKey`, `…ThumbnailHiddenKey`); none by default.
  public var options: ThumbnailOptions

  /// Makes an attachment.
  public init(
    identifier: String, url: String, typeHint: String, source: String? = nil,
    options: ThumbnailOptions = ThumbnailOptions()
  ) {
    self.identifier = identifier
    self.url = url
    self.typeHint = typeHint
    self.source = source
    self.options = options
  }

  /// The local path of ``url``.
  public var path: String {
    URL(string: url)?.path ?? url
  }
}

extension NotificationContent {
  /// The JSON written to standard output: the content's fields, plus the trace when given,
  /// keys sorted, through AttachmentKit's writer (so what a payload or server sent is escaped
  /// there exactly as on the command line: C0, C1 and bidi controls never come out raw).
  public func json(trace: [TraceStep]? = nil) -> String {
    var fields: [(key: String, value: JSON)] = [
      ("attachments", .array(attachments.map(\.json))),
      ("body", .string(body)),
      ("categoryIdentifier", .string(categoryIdentifier)),
      ("subtitle", .string(subtitle)),
      ("title", .string(title)),
    ]
    if let trace { fields.append(("trace", .array(trace.map(\.json)))) }
    fields.append(("userInfo", JSONValue.object(userInfo).json))
    return JSON.object(fields).prettyText()
  }
}

extension DeliveredAttachment {
  /// The attachment as JSON: `options` only when a thumbnail option is set.
  var json: JSON {
    var fields: [(key: String, value: JSON)] = [("identifier", .string(identifier))]
    if let source { fields.append(("source", .string(source))) }
    if !options.isEmpty { fields.append(("options", options.json)) }
    fields += [("typeHint", .string(typeHint)), ("url", .string(url))]
    return .object(fields)
  }
}
