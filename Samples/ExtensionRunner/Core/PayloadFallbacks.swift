import Foundation

/// What a payload offers for when its attachment cannot be made: alternative URLs and text.
///
/// - `"fallback-urls": [URL, …]` (or one URL string) are alternatives for the payload's *first*
///   attachment, the one iOS shows as the thumbnail: when it fails they are tried one after the
///   other, each only after the one before failed, each with what is left of the budget, and
///   the first that becomes an attachment takes its place. Later attachments have none.
/// - `"fallback-body": "…"` replaces the body only when the payload asked for attachments and
///   none could be made (none of them, nor any alternative); when one was made, the body stays.
///
/// Values of another shape are ignored and noted in ``problems``, as the rest of the payload's
/// fields are.
public struct PayloadFallbacks: Sendable, Equatable {
  /// The key of the alternative URLs.
  public static let urlsKey = "fallback-urls"
  /// The key of the alternative text.
  public static let bodyKey = "fallback-body"
  /// The most alternatives read; the rest are ignored and noted.
  public static let maximumURLs = 10

  /// The alternative URLs, in the order they are tried.
  public var urls: [String] = []
  /// The text that replaces the body when no attachment could be made.
  public var body: String?
  /// Fields that were present but unusable, one sentence each.
  public var problems: [String] = []

  /// Reads the fallbacks of `userInfo` (the whole payload).
  public init(userInfo: [String: JSONValue]) {
    switch userInfo[Self.urlsKey] {
    case .none: break
    case .string(let url)?: add(url, at: Self.urlsKey)
    case .array(let items)?:
      for (index, item) in items.enumerated() {
        guard let url = item.stringValue else {
          problems.append("\(Self.urlsKey)[\(index)] is \(item.kindDescription), not a URL string: ignored")
          continue
        }
        add(url, at: "\(Self.urlsKey)[\(index)]")
      }
    case let other?:
      problems.append("\(Self.urlsKey) is \(other.kindDescription), not an array of URLs: ignored")
    }
    if urls.count > Self.maximumURLs {
      problems.append(
        "\(Self.urlsKey) has \(urls.count) URLs: only the first \(Self.maximumURLs) are tried")
      urls.removeLast(urls.count - Self.maximumURLs)
    }
    switch userInfo[Self.bodyKey] {
    case .none: break
    case .string(let text)?: body = text
    case let other?:
      problems.append("\(Self.bodyKey) is \(other.kindDescription), not a string: ignored")
    }
  }

  /// Adds `url` unless it is empty once trimmed (then notes it).
  private mutating func add(_ url: String, at path: String) {
    let trimmed = url.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !trimmed.isEmpty else {
      problems.append("\(path) is an empty string: ignored")
      return
    }
    urls.append(trimmed)
  }
}
