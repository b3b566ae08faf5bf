import Foundation

/// One attachment a payload asks for: where to fetch it and what to call it.
public struct AttachmentReference: Sendable, Equatable {
  /// The identifier for `UNNotificationAttachment`: the payload's `id`, else `attachment-N`.
  public var identifier: String
  /// The URL to fetch.
  public var url: String
  /// The key path it was found under (`image-url`, `attachments[1].url`…), for the trace.
  public var origin: String

  /// Makes a reference.
  public init(identifier: String, url: String, origin: String) {
    self.identifier = identifier
    self.url = url
    self.origin = origin
  }
}

/// Finds attachment URLs in a payload under the keys people use.
///
/// Each key is a dot-separated path from the top of the payload (`fcm_options.image` is the
/// `image` field of the `fcm_options` object). The value at a key may be a URL string, an
/// object with a `url` (and optional `id`), or an array of either (`attachments:
/// [{"url": …, "id": …}]`). Keys are searched in order, which becomes the attachments' order
/// (iOS shows the first one as the thumbnail); a URL found twice is fetched once. A value of any
/// other shape is skipped and noted.
public struct AttachmentLocator: Sendable, Equatable {
  /// The key paths searched, in order.
  public var keys: [String]

  /// The keys searched by default.
  public static let defaultKeys = [
    "image-url", "attachment-url", "media_url", "fcm_options.image", "attachments",
  ]

  /// Makes a locator searching `keys` in order.
  public init(keys: [String] = AttachmentLocator.defaultKeys) {
    self.keys = keys
  }

  /// What a search found: the references and the unusable fields.
  public struct Findings: Sendable, Equatable {
    /// The attachments to fetch, in order, each URL once, identifiers unique.
    public var references: [AttachmentReference] = []
    /// Fields that were present but unusable, one sentence each.
    public var problems: [String] = []
    /// URLs skipped because an earlier key already asked for them, one sentence each.
    public var duplicates: [String] = []
  }

  /// Searches `userInfo` (the whole payload).
  public func references(in userInfo: [String: JSONValue]) -> Findings {
    var findings = Findings()
    var candidates: [(id: String?, url: String, origin: String)] = []
    for key in keys {
      guard let value = Self.value(at: key, in: userInfo) else { continue }
      collect(value, origin: key, into: &candidates, problems: &findings.problems)
    }
    var seenURLs: Set<String> = []
    var seenIdentifiers: Set<String> = []
    for candidate in candidates {
      guard seenURLs.insert(candidate.url).inserted else {
        findings.duplicates.append("\(candidate.origin) repeats an earlier URL: fetched once")
        continue
      }
      var identifier = candidate.id ?? "attachment-\(findings.references.count + 1)"
      if seenIdentifiers.contains(identifier) {
        var suffix = 2
        while seenIdentifiers.contains("\(identifier)-\(suffix)") { suffix += 1 }
        identifier = "\(identifier)-\(suffix)"
      }
      seenIdentifiers.insert(identifier)
      findings.references.append(
        AttachmentReference(identifier: identifier, url: candidate.url, origin: candidate.origin))
    }
    return findings
  }

  /// The value at a dot-separated key path, or `nil` when any step is missing or not an object.
  static func value(at path: String, in userInfo: [String: JSONValue]) -> JSONValue? {
    let steps = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard let first = steps.first, var value = userInfo[first] else { return nil }
    for step in steps.dropFirst() {
      guard let next = value[step] else { return nil }
      value = next
    }
    return value
  }

  /// Adds the URLs of one value (string, `{url, id}` object, or array of either).
  private func collect(
    _ value: JSONValue, origin: String, into candidates: inout [(id: String?, url: String, origin: String)],
    problems: inout [String], nested: Bool = false
  ) {
    switch value {
    case .string(let url):
      let trimmed = url.trimmingCharacters(in: .whitespacesAndNewlines)
      if trimmed.isEmpty {
        problems.append("\(origin) is an empty string: ignored")
      } else {
        candidates.append((nil, trimmed, origin))
      }
    case .object(let fields):
      guard let url = fields["url"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines),
        !url.isEmpty
      else {
        problems.append("\(origin) has no \"url\" string: ignored")
        return
      }
      var identifier: String? = nil
      if let id = fields["id"] {
        if let text = id.stringValue, !text.isEmpty {
          identifier = text
        } else if case .integer(let number) = id {
          identifier = String(number)
        } else {
          problems.append("\(origin).id is \(id.kindDescription), not a string: a default is used")
        }
      }
      candidates.append((identifier, url, origin + ".url"))
    case .array(let items) where !nested:
      for (index, item) in items.enumerated() {
        collect(item, origin: "\(origin)[\(index)]", into: &candidates, problems: &problems, nested: true)
      }
    default:
      problems.append("\(origin) is \(value.kindDescription), not a URL or {\"url\": …}: ignored")
    }
  }
}
