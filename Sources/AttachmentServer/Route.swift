import AttachmentKit

/// What a request path asks for, decided from the path alone (no I/O), so the rules can be
/// tested as values.
enum Route: Equatable {
  /// `GET /healthz`.
  case health
  /// `GET /metrics`.
  case metrics
  /// `GET /readyz`: whether the server can serve (its cache directory usable, keys loaded).
  case ready
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
    case .ready: "readyz"
    case .attachment(_, let signature): signature == nil ? "unsigned" : "attachment"
    case .info: "info"
    case .notFound, .malformed: "other"
    }
  }

  /// The route of a request target exactly as the client sent it (path and query, before any
  /// percent-decoding). A proxy path (`/v1/…`) has one spelling only, so that a CDN keys one
  /// signed URL once: a query (even an empty `?`) or a `%` anywhere makes it `malformed`; the
  /// base64url and hex segments then admit no second spelling either (see ``url(_:)`` and
  /// ``URLSigner/verify(signature:for:)``). Other paths ignore a query. Splits on bytes, not
  /// characters: this runs for every request.
  init(target: String) {
    var path = Substring(target)
    let isProxyPath = target.utf8.starts(with: "/v1/".utf8)
    if isProxyPath, target.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }) {
      self = .malformed(Self.oneSpelling)
      return
    }
    if let query = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = path[..<query] }
    let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    // "/v1/a/sig/enc" splits into ["", "v1", "a", "sig", "enc"].
    func part(_ index: Int, is text: StaticString) -> Bool {
      index < parts.count
        && parts[index].elementsEqual(
          UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
    guard parts.count >= 2, parts[0].isEmpty else {
      self = .notFound
      return
    }
    if parts.count == 2 && part(1, is: "healthz") {
      self = .health
    } else if parts.count == 2 && part(1, is: "metrics") {
      self = .metrics
    } else if parts.count == 2 && part(1, is: "readyz") {
      self = .ready
    } else if !part(1, is: "v1") {
      self = .notFound
    } else if parts.count == 5 && (part(2, is: "a") || part(2, is: "info")) {
      guard let url = Self.url(parts[4]) else {
        self = .malformed(Self.badEncoding)
        return
      }
      let signature = String(decoding: parts[3], as: UTF8.self)
      self =
        part(2, is: "a") ? .attachment(url: url, signature: signature) : .info(url: url, signature: signature)
    } else if parts.count == 4 && part(2, is: "u") {
      guard let url = Self.url(parts[3]) else {
        self = .malformed(Self.badEncoding)
        return
      }
      self = .attachment(url: url, signature: nil)
    } else {
      self = .malformed(
        "A proxy path is /v1/a/<signature>/<base64url(url)> or /v1/info/<signature>/<base64url(url)>.")
    }
  }

  private static let oneSpelling =
    "A proxy path has one spelling: no query and no percent-encoding (base64url and lower-case hex as signed)."

  private static let badEncoding = "The URL in the path is not base64url (without padding) of a UTF-8 URL."

  /// The URL an encoded path segment holds: base64url without padding of UTF-8 text with no
  /// spaces or control characters, at most 8 KiB.
  private static func url(_ segment: Substring.UTF8View) -> String? {
    guard !segment.isEmpty, segment.count <= 11_000, let bytes = Base64URL.decode(bytes: segment),
      let text = String(validating: bytes, as: UTF8.self),
      !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }),
      !text.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) })
    else { return nil }
    return text
  }
}
