import AttachmentKit

/// What a request path asks for, decided from the path alone (no I/O), so the rules can be
/// tested as values.
enum Route: Equatable {
  /// `GET /healthz`.
  case health
  /// `GET /metrics`.
  case metrics
  /// `/v1/a/<sig>/<enc>` (`signature` set) or `/v1/u/<enc>` (`signature` nil): the file.
  case attachment(url: String, signature: String?)
  /// `/v1/info/<sig>/<enc>`: the JSON record.
  case info(url: String, signature: String)
  /// A path the server does not serve.
  case notFound
  /// A proxy path that does not decode (answer `400 bad_request`).
  case malformed(String)

  /// The metrics label of the route.
  var label: String {
    switch self {
    case .health: "healthz"
    case .metrics: "metrics"
    case .attachment(_, let signature): signature == nil ? "unsigned" : "attachment"
    case .info: "info"
    case .notFound, .malformed: "other"
    }
  }

  /// The route of `path` (without the query).
  init(path: String) {
    let parts = path.split(separator: "/", omittingEmptySubsequences: false)
    // "/v1/a/sig/enc" splits into ["", "v1", "a", "sig", "enc"].
    switch (parts.count, parts.first, parts.dropFirst().first) {
    case (2, "", "healthz"): self = .health
    case (2, "", "metrics"): self = .metrics
    case (5, "", "v1") where parts[2] == "a" || parts[2] == "info":
      guard let url = Self.url(parts[4]) else {
        self = .malformed("The URL in the path is not base64url (without padding) of a UTF-8 URL.")
        return
      }
      let signature = String(parts[3])
      self =
        parts[2] == "a" ? .attachment(url: url, signature: signature) : .info(url: url, signature: signature)
    case (4, "", "v1") where parts[2] == "u":
      guard let url = Self.url(parts[3]) else {
        self = .malformed("The URL in the path is not base64url (without padding) of a UTF-8 URL.")
        return
      }
      self = .attachment(url: url, signature: nil)
    case (_, "", "v1"):
      self = .malformed(
        "A proxy path is /v1/a/<signature>/<base64url(url)> or /v1/info/<signature>/<base64url(url)>.")
    default: self = .notFound
    }
  }

  /// The URL an encoded path segment holds: base64url without padding of UTF-8 text with no
  /// control characters, at most 8 KiB.
  private static func url(_ segment: Substring) -> String? {
    guard !segment.isEmpty, segment.utf8.count <= 11_000, let bytes = Base64URL.decode(segment),
      let text = String(validating: bytes, as: UTF8.self),
      !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
    else { return nil }
    return text
  }
}
