import AttachmentKit

/// What the access log shows of a request: its path with our signature (or a hidden route's
/// sealed URL) replaced by `-`, its expiry kept, and
/// the origin URL with its credentials redacted (`user:password@` and the values of query
/// parameters that carry secrets, such as `X-Amz-Signature` or `token`). A proxy path's
/// encoded URL is the encoding of the redacted URL, so that a line never holds a secret in any
/// spelling, and a URL with nothing to redact keeps its path as signed (what a tier logs).
enum LoggedPath {
  /// The logged path of a request for `target`, routed as `route`.
  static func of(target: String, route: Route) -> String {
    switch route {
    case .proxy(let path):
      let expiry = path.expiry.map { "\($0)/" } ?? ""
      // A profile's path keeps its profile segment: which platform asked is an operator's question.
      let route = (path.profile.map { "/v1/\($0)/" } ?? "/v1/") + path.route.name
      switch path.payload {
      case .url(let url):
        let encoded = Base64URL.encode(Array(redact(url).utf8))
        let signature = path.route.protection == .signed ? "-/" : ""
        return "\(route)/\(signature)\(expiry)\(encoded)"
      case .sealed:
        // The sealed URL opens the file as a signature does: it is not logged either.
        return "\(route)/\(expiry)-"
      }
    case .malformed:
      // Up to the route's name: what follows may be a signature, spelled any way.
      let parts = target.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
      return parts.prefix(3).joined(separator: "/").prefix { $0 != "?" && $0 != "%" } + "/-"
    case .health, .metrics, .ready, .notFound:
      // A query is not ours to read: it may carry anything.
      let path = target.prefix { $0 != "?" }
      return RequestFacts.capped(String(path.prefix(256)))
    }
  }

  /// `url` with credentials redacted: ``Redaction/redact(_:)`` and secret query values as `***`.
  static func redact(_ url: String) -> String {
    let redacted = Redaction.redact(url)
    guard redacted.utf8.contains(UInt8(ascii: "?")), let question = redacted.firstIndex(of: "?") else {
      return redacted
    }
    let end = redacted[question...].firstIndex(of: "#") ?? redacted.endIndex
    let query = redacted[redacted.index(after: question)..<end].split(
      separator: "&", omittingEmptySubsequences: false
    ).map { pair -> String in
      guard let equals = pair.firstIndex(of: "="), isSecret(pair[..<equals]) else { return String(pair) }
      return pair[...equals] + "***"
    }
    return redacted[...question] + query.joined(separator: "&") + redacted[end...]
  }

  /// Whether a query parameter's name says its value is a secret (signatures, tokens, keys,
  /// passwords, credentials, sessions), in any case.
  static func isSecret(_ name: Substring) -> Bool {
    let lower = name.lowercased()
    return ["sig", "token", "key", "secret", "pass", "credential", "auth", "session"].contains {
      lower.contains($0)
    }
  }
}
