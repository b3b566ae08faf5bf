import AttachmentKit

extension AttachmentError.Code {
  // The media proxy (`attachkit serve`)

  /// The signature of a signed proxy path does not verify with any key (HTTP `403`).
  public static let badSignature = Self("bad_signature", kind: .proxy)
  /// A signed or hidden path whose signature or seal holds but whose expiry has passed (HTTP
  /// `410`: it will never be served again, and a CDN may remember that).
  public static let signatureExpired = Self("signature_expired", kind: .proxy)
  /// A hidden-origin path (`/v1/e/…`, `/v1/ei/…`) whose sealed URL does not decrypt and
  /// authenticate with any key: changed, made for another route or expiry, or sealed with a
  /// removed key (HTTP `403`).
  public static let badEncryptedURL = Self("bad_encrypted_url", kind: .proxy)
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
