import AttachmentKit

/// What the answer to a hidden-origin path (`/v1/e/…`, `/v1/ei/…`) says of its origin: nothing.
/// An error's message can name the origin's host or address (curl's "Could not resolve host:
/// cdn.example.com"), so an error answered to a sealed route keeps its code, status, headers,
/// `detected` and `httpStatus`, and says only that details are withheld. The proxy's own
/// refusals (`bad_encrypted_url`, `signature_expired`, `bad_request`) name no origin and are kept
/// as they are; the access log still records the redacted URL for the operator.
enum HiddenOrigin {
  /// The message every origin error of a hidden path is answered with.
  static let message = "The hidden URL could not be served; its origin's details are withheld."

  /// `reply` as answered to `route`: unchanged unless `route` is a sealed proxy path and `reply`
  /// an error of a kind other than the proxy's own.
  static func answer(_ reply: Reply, route: Route) -> Reply {
    guard case .proxy(let path) = route, path.route.protection == .sealed, let error = reply.error,
      error.kind != .proxy
    else { return reply }
    let withheld = AttachmentError(
      error.code, message, httpStatus: error.httpStatus, detected: error.detected, kind: error.kind)
    var hidden = reply
    hidden.body = .bytes(Array((Reply.errorJSON(withheld).text + "\n").utf8))
    hidden.error = withheld
    return hidden
  }
}
