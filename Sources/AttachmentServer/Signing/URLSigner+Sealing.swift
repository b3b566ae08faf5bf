import AttachmentKit

/// Hidden origins: a sealed route's URL is encrypted and authenticated with AES-256-GCM under a
/// key derived from each key of the key file, so the path shows nothing of the origin and a
/// changed byte is refused. The first key seals; every key opens (rotation as for signatures).
extension URLSigner {
  /// The AES-256 key of a key-file key: HMAC-SHA256(key, `attachkit sealed-url key v1`), a PRF
  /// keyed by the key file's key, so the HMAC key itself never encrypts.
  /// - Throws: `invalid_configuration` when libcrypto is missing or fails.
  static func sealingKey(_ key: [UInt8]) throws(AttachmentError) -> [UInt8] {
    try hmac(key: key, message: Array("attachkit sealed-url key v1".utf8))
  }

  /// The additional data a sealed path authenticates: its route's name and its expiry (empty
  /// when none), so a sealed URL cannot move to another route, gain, lose or change an expiry;
  /// and, on a path that names one, the profile (a line of its own, which no path without one
  /// has), so it cannot move to another profile either.
  static func sealedData(route: ProxyRoute, expiry: Int64?, profile: String? = nil) -> [UInt8] {
    Array(
      ("attachkit sealed url v1\n\(route.name)\n\(expiry.map(String.init) ?? "")"
        + (profile.map { "\nprofile \($0)" } ?? "")).utf8)
  }

  /// `nonce ‖ ciphertext ‖ tag` of `url` for `route` and `expiry`, under the first key; a fresh
  /// random nonce each time, so each call gives another path.
  /// - Throws: `invalid_configuration` when libcrypto is missing or fails.
  func seal(
    _ url: String, route: ProxyRoute, expiry: Int64?, profile: String? = nil
  ) throws(AttachmentError) -> [UInt8] {
    try AESGCM.seal(
      Array(url.utf8), aad: Self.sealedData(route: route, expiry: expiry, profile: profile),
      key: try Self.sealingKey(keys[0]))
  }

  /// The URL `sealed` holds for `route` and `expiry` under any key, or `nil` when no key
  /// authenticates it (a changed byte, another route or expiry, a removed key) or what it holds
  /// is no URL a proxy path may carry. Every key is tried, whichever opens it.
  func open(_ sealed: [UInt8], route: ProxyRoute, expiry: Int64?, profile: String? = nil) -> String? {
    let data = Self.sealedData(route: route, expiry: expiry, profile: profile)
    var opened: [UInt8]?
    for key in keys {
      guard let derived = try? Self.sealingKey(key) else { return nil }
      if let plaintext = AESGCM.open(sealed, aad: data, key: derived), opened == nil { opened = plaintext }
    }
    return opened.flatMap(ProxyPath.acceptableURL)
  }
}
