import AttachmentKit
import Foundation

/// One attachment a payload asks for: where to fetch it and what to call it.
public struct AttachmentReference: Sendable, Equatable {
  /// The identifier for `UNNotificationAttachment`: the payload's `id`, else `attachment-N`.
  public var identifier: String
  /// The URL to fetch.
  public var url: String
  /// The key path it was found under (`image-url`, `attachments[1].url`…), for the trace.
  public var origin: String
  /// The thumbnail options the payload gave it (``ThumbnailOptions``), usable fields only.
  public var options: ThumbnailOptions

  /// Makes a reference.
  public init(identifier: String, url: String, origin: String, options: ThumbnailOptions = ThumbnailOptions())
  {
    self.identifier = identifier
    self.url = url
    self.origin = origin
    self.options = options
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
///
/// Thumbnail options (``ThumbnailOptions``): an object with a `url` may carry them under
/// `options` (Airship's `"media_attachment": {"url": …, "options": {"crop": …, "time": …,
/// "hidden": …}}`, or an item of `attachments`). A URL string takes the `options` object beside
/// it, in the same object: a top-level `options` for `image-url`, `attachment-url` or
/// `media_url`, `fcm_options.options` for `fcm_options.image`. One `options` object applies to
/// one attachment: the first URL string beside it in key order (the others get none, noted).
/// Unusable fields are dropped and noted; the attachment is fetched all the same.
public struct AttachmentLocator: Sendable, Equatable {
  /// The key paths searched, in order.
  public var keys: [String]

  /// The keys searched by default.
  public static let defaultKeys = [
    "image-url", "attachment-url", "media_url", "media_attachment", "fcm_options.image", "attachments",
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
    var candidates: [Candidate] = []
    var usedOptions: Set<String> = []
    for key in keys {
      guard let value = Self.value(at: key, in: userInfo) else { continue }
      let first = candidates.endIndex
      collect(value, origin: key, into: &candidates, problems: &findings.problems)
      // A URL string takes the `options` object beside it, the first URL beside it only.
      guard case .string = value, first < candidates.endIndex else { continue }
      let beside = Self.optionsPath(besides: key)
      guard let options = Self.value(at: beside, in: userInfo) else { continue }
      guard usedOptions.insert(beside).inserted else {
        findings.problems.append("\(beside) applies to the first URL beside it only: none for \(key)")
        continue
      }
      let (parsed, problems) = ThumbnailOptions.parse(options, origin: beside)
      candidates[first].options = parsed
      findings.problems += problems
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
        AttachmentReference(
          identifier: identifier, url: candidate.url, origin: candidate.origin, options: candidate.options))
    }
    return findings
  }

  /// One URL found, before duplicates are dropped and identifiers made unique.
  private struct Candidate {
    var id: String?
    var url: String
    var origin: String
    var options = ThumbnailOptions()
  }

  /// The path of the `options` object beside the value at `path`: `options` in the same
  /// object (`fcm_options.image` → `fcm_options.options`, `image-url` → `options`).
  static func optionsPath(besides path: String) -> String {
    guard let dot = path.lastIndex(of: ".") else { return "options" }
    return path[..<dot] + ".options"
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
    _ value: JSONValue, origin: String, into candidates: inout [Candidate],
    problems: inout [String], nested: Bool = false
  ) {
    switch value {
    case .string(let url):
      let trimmed = url.trimmingCharacters(in: .whitespacesAndNewlines)
      if trimmed.isEmpty {
        problems.append("\(origin) is an empty string: ignored")
      } else {
        candidates.append(Candidate(id: nil, url: trimmed, origin: origin))
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
      var options = ThumbnailOptions()
      if let value = fields["options"] {
        let (parsed, found) = ThumbnailOptions.parse(value, origin: origin + ".options")
        options = parsed
        problems += found
      }
      candidates.append(Candidate(id: identifier, url: url, origin: origin + ".url", options: options))
    case .array(let items) where !nested:
      for (index, item) in items.enumerated() {
        collect(item, origin: "\(origin)[\(index)]", into: &candidates, problems: &problems, nested: true)
      }
    default:
      problems.append("\(origin) is \(value.kindDescription), not a URL or {\"url\": …}: ignored")
    }
  }
}
