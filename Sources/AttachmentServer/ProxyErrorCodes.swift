import AttachmentKit

extension AttachmentError.Code {
  // The media proxy (`attachkit serve`)

  /// The signature of a signed proxy path does not verify with any key (HTTP `403`).
  public static let badSignature = Self("bad_signature", kind: .proxy)
  /// A proxy request is malformed: an unknown route, a path or URL that does not decode, or a
  /// bad `X-Deadline-Ms` (HTTP `400`).
  public static let badRequest = Self("bad_request", kind: .proxy)
  /// A path the proxy does not serve (HTTP `404`).
  public static let notFound = Self("not_found", kind: .proxy)
  /// A proxy request used a method other than `GET` or `HEAD` (HTTP `405`).
  public static let methodNotAllowed = Self("method_not_allowed", kind: .proxy)
  /// The proxy is over its connection or upstream-fetch limit, or is shutting down (HTTP `503`).
  public static let overloaded = Self("overloaded", kind: .proxy)
}
