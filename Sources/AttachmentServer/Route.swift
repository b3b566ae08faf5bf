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
  /// A proxy path (`/v1/…`): one of the forms of a row of ``ProxyRoute``, parsed, not yet
  /// verified.
  case proxy(ProxyPath)
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
    case .proxy(let path): path.route.label
    case .notFound, .malformed: "other"
    }
  }

  /// The route of a request target exactly as the client sent it (path and query, before any
  /// percent-decoding). A proxy path (`/v1/…`) has one spelling only, so that a CDN keys one
  /// signed URL once: a query (even an empty `?`) or a `%` anywhere makes it `malformed`; the
  /// route's row (``ProxyRoute``) then picks the form by its segment count, and the base64url,
  /// expiry and hex segments admit no second spelling either (``ProxyPath/parse(_:)``,
  /// ``URLSigner/verify(signature:for:route:expires:)``). Other paths ignore a query. Splits on
  /// bytes, not characters: this runs for every request.
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
    } else {
      switch ProxyPath.parse(parts[2...]) {
      case .success(let path): self = .proxy(path)
      case .failure(let problem): self = .malformed(problem.message)
      }
    }
  }

  /// The old file route, `/v1/a/<signature>/<enc>`, or `/v1/u/<enc>` when `signature` is `nil`.
  static func attachment(url: String, signature: String?) -> Route {
    .proxy(
      ProxyPath(
        route: signature == nil ? .unsigned : .attachment, signature: signature, expiry: nil,
        payload: .url(url)))
  }

  /// The old info route, `/v1/info/<signature>/<enc>`.
  static func info(url: String, signature: String) -> Route {
    .proxy(ProxyPath(route: .info, signature: signature, expiry: nil, payload: .url(url)))
  }

  private static let oneSpelling =
    "A proxy path has one spelling: no query and no percent-encoding (base64url and lower-case hex as signed)."
}
