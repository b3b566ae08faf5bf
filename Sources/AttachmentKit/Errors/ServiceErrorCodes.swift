extension AttachmentError.Code {
  // The media proxy (`attachkit serve`)

  /// The signature of a signed proxy path does not verify with any key (HTTP `403`).
  public static let badSignature = Self(rawValue: "bad_signature")
  /// A proxy request is malformed: an unknown route, a path or URL that does not decode, or a
  /// bad `X-Deadline-Ms` (HTTP `400`).
  public static let badRequest = Self(rawValue: "bad_request")
  /// A path the proxy does not serve (HTTP `404`).
  public static let notFound = Self(rawValue: "not_found")
  /// A proxy request used a method other than `GET` or `HEAD` (HTTP `405`).
  public static let methodNotAllowed = Self(rawValue: "method_not_allowed")
  /// The proxy is over its connection or upstream-fetch limit, or is shutting down (HTTP `503`).
  public static let overloaded = Self(rawValue: "overloaded")
}
