import AttachmentKit

/// The paths of the route table's forms (``ProxyRoute``): made for a URL, and checked back to
/// the URL they name.
extension URLSigner {
  /// The proxy path of `url` on `route`, expiring at `expires` (Unix seconds) when given:
  /// `/v1/a/<signature>/<base64url(url)>` (the default, as ever), `/v1/info/<signature>/…`,
  /// `/v1/a/<signature>/<expiry>/<base64url(url)>`, `/v1/e/[<expiry>/]<base64url(sealed)>`
  /// (a new random nonce each call), `/v1/u/<base64url(url)>`; with `profile` (`android`,
  /// `ios-compact`), the same after `/v1/<profile>`, the profile covered by the signature or seal.
  /// - Throws: `invalid_url` when `url` holds a space or control character or is too long for a
  ///   path (the proxy would refuse it); `invalid_configuration` for an expiry outside
  ///   `1...SignatureExpiry.latest` or on a route that cannot expire, or when libcrypto fails;
  ///   `unknown_profile` for a profile a path cannot name (`ios`, an unknown one, or any on the
  ///   unsigned route).
  public func path(
    for url: String, route: ProxyRoute = .attachment, expires: Int64? = nil, profile: String? = nil
  ) throws(AttachmentError) -> String {
    if let profile, !ProxyPath.profileNames.contains(profile) || route.protection == .unsigned {
      throw AttachmentError(
        .unknownProfile,
        "A path names one of the profiles \(ProxyPath.profileNames.sorted().joined(separator: ", ")), on a signed or hidden route (ios, the default, is named by none)."
      )
    }
    let prefix = profile.map { "/v1/\($0)" } ?? "/v1"
    guard ProxyPath.acceptableURL(Array(url.utf8)) != nil else {
      throw AttachmentError(
        .invalidURL, "A proxy path carries a URL with no space or control character, at most about 8 KiB.")
    }
    var expirySegment = ""
    if let expires {
      guard route.canExpire, let text = SignatureExpiry.segment(expires) else {
        throw AttachmentError(
          .invalidConfiguration,
          "An expiry is Unix seconds in 1...\(SignatureExpiry.latest), on a signed or hidden route.")
      }
      expirySegment = "/" + text
    }
    switch route.protection {
    case .signed:
      let signature = try signature(for: url, route: route, expires: expires, profile: profile)
      return "\(prefix)/\(route.name)/\(signature)\(expirySegment)/\(Base64URL.encode(Array(url.utf8)))"
    case .sealed:
      let sealed = try seal(url, route: route, expiry: expires, profile: profile)
      return "\(prefix)/\(route.name)\(expirySegment)/\(Base64URL.encode(sealed))"
    case .unsigned:
      return "/v1/\(route.name)/\(Base64URL.encode(Array(url.utf8)))"
    }
  }

  /// The URL `path` names once its signature verifies (or its sealed URL opens) under any key
  /// and its expiry, if any, is later than `now` (Unix seconds: the caller's clock, so tests can
  /// set it). The signature or seal is checked first, so a forged expiry is never told apart.
  /// An unsigned path's URL is returned as it is (whether unsigned paths are served is the
  /// server's choice).
  /// - Throws: `bad_signature` (403) when the signature does not verify; `bad_encrypted_url`
  ///   (403) when a sealed URL does not open; `signature_expired` (410) when the expiry is at
  ///   or before `now`.
  public func url(of path: ProxyPath, now: Int64) throws(AttachmentError) -> String {
    let url: String
    switch path.payload {
    case .url(let text):
      if path.route.protection == .signed {
        guard let signature = path.signature,
          verify(
            signature: signature, for: text, route: path.route, expires: path.expiry, profile: path.profile)
        else { throw AttachmentError(.badSignature, "The signature does not verify for this URL.") }
      }
      url = text
    case .sealed(let sealed):
      guard let opened = open(sealed, route: path.route, expiry: path.expiry, profile: path.profile) else {
        throw AttachmentError(
          .badEncryptedURL, "The hidden URL does not decrypt and authenticate with any key.")
      }
      url = opened
    }
    if let expiry = path.expiry, expiry <= now {
      throw AttachmentError(.signatureExpired, "This signed URL expired at \(expiry) (Unix seconds).")
    }
    return url
  }
}
