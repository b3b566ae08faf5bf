import AttachmentKit

/// The fallback image (`--fallback-image`) in place of an error answer.
///
/// Only a failure of the file itself or of its origin is replaced: a refusal (`422`: the
/// ``AttachmentError/Kind/rejection`` kind) and an upstream failure (`502`, `504`: the
/// ``AttachmentError/Kind/fetch`` kind), answered fresh or from the refusal memo, on a file
/// route (`/v1/a/…`, `/v1/e/…`, `/v1/u/…`), for `GET` and `HEAD` alike. These are the errors the
/// refusal memo remembers: the path was genuine and the URL well formed, and only the content
/// was missing. Everything else keeps its error, so that no tier keeps an image under a path
/// that should never have been answered: a bad or expired signature (`403`, `410`), a malformed
/// path or URL (`400`), a refused address or origin (`403`, the operator's policy), a method
/// (`405`), overload or a drain (`503`), a range outside the file (`416`), this machine's own
/// failures (`500`), and the info route (whose record says what failed).
///
/// The answer is `200` with the image's bytes (a `Range` or `If-None-Match` is not applied: it
/// has no `ETag`), its `Content-Type` and type hint, `X-Attachment-Fallback: 1`, and
/// `Cache-Control: public, max-age=N` with N the configured lifetime (60 s by default), so that a
/// CDN keeps it briefly and asks again. An error that was this request's alone, and so answered
/// `no-store` (its own `X-Deadline-Ms` passed while the fetch goes on for the others), gives a
/// fallback that is `no-store` too: no tier keeps a placeholder for a file that is on its way. The access log records `outcome: fallback` with the error
/// it replaced in `fallbackFor`; the metrics count it in `attachkit_fallbacks_total{code}`.
enum FallbackAnswer {
  /// Whether `reply`, answered to `route`, is an error the fallback replaces.
  static func replaces(_ reply: Reply, route: Route) -> Bool {
    guard case .proxy(let path) = route, path.route.answer == .file, let error = reply.error else {
      return false
    }
    return error.kind == .rejection || error.kind == .fetch
  }

  /// `reply` as answered to `route` when `image` is the fallback: the fallback answer when
  /// ``replaces(_:route:)`` says so, else `reply` unchanged.
  static func answer(
    _ reply: Reply, route: Route, image: FallbackImage?, lifetimeSeconds: Int
  ) -> Reply {
    guard let image, replaces(reply, route: route), let error = reply.error else { return reply }
    reply.close()
    let ownError = reply.headers.contains { $0.0 == "Cache-Control" && $0.1 == "no-store" }
    return Reply(
      status: 200,
      headers: [
        ("Content-Type", image.mime),
        ("Cache-Control", ownError ? "no-store" : "public, max-age=\(max(0, lifetimeSeconds))"),
        ("X-Attachment-Type-Hint", image.uti),
        ("X-Attachment-Fallback", "1"),
      ],
      body: .bytes(image.bytes), outcome: "fallback", url: reply.url, error: nil,
      fallbackFor: error.code.rawValue)
  }
}
