import AttachmentKit

/// Signs and verifies the media proxy's URLs (the camo scheme): the signature is the lowercase
/// hex of HMAC-SHA256(key, the URL's UTF-8 bytes), and the URL travels in the path as base64url
/// without padding: `/v1/a/<signature>/<base64url(url)>`. Each route has its own signature:
/// `/v1/info/…` signs `info`, a line feed and the URL (``message(for:route:expiry:)``), so holding a
/// push's attachment URL does not open its info record. A path may also expire (its expiry is
/// signed with it), or hide its origin (AES-256-GCM, `URLSigner+Sealing.swift`); the forms are
/// the rows of ``ProxyRoute``, built by ``path(for:route:expires:)`` and checked by ``url(of:now:)``.
///
/// Several keys can verify and the first signs, so keys rotate with no downtime: add the new key
/// second, deploy, move it first, deploy, remove the old one. Signatures are compared in constant
/// time (`CRYPTO_memcmp`). libcrypto is loaded on first use.
///
/// ```swift
/// let signer = try URLSigner(keyFile: "/etc/attachkit/keys")
/// let path = try signer.path(for: "https://cdn.example.com/push/123.jpg")
/// // "/v1/a/5d1c…/aHR0cHM6Ly9jZG4uZXhhbXBsZS5jb20vcHVzaC8xMjMuanBn"
/// ```
public struct URLSigner: Sendable {
  /// The keys, the signing key first. Each is at least ``minimumKeyBytes`` long.
  public let keys: [[UInt8]]

  /// The shortest key accepted, in bytes (128 bits).
  public static let minimumKeyBytes = 16

  /// A signer with these keys (the first signs, all verify).
  /// - Throws: `invalid_configuration` when there is no key or a key is shorter than
  ///   ``minimumKeyBytes``.
  public init(keys: [[UInt8]]) throws(AttachmentError) {
    guard !keys.isEmpty else {
      throw AttachmentError(.invalidConfiguration, "The key file holds no key.")
    }
    for (index, key) in keys.enumerated() where key.count < Self.minimumKeyBytes {
      throw AttachmentError(
        .invalidConfiguration,
        "Key \(index + 1) is \(key.count) bytes; a signing key needs at least \(Self.minimumKeyBytes).")
    }
    self.keys = keys
  }

  /// A signer with the keys of a key file's text: one hex key per line (the HMAC key is the
  /// decoded bytes); blank lines and lines starting with `#` are skipped.
  /// - Throws: `invalid_configuration` when a line is not hex, or as ``init(keys:)``.
  public init(keyFileText text: String) throws(AttachmentError) {
    var keys: [[UInt8]] = []
    for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let trimmed = line.trimmingCharacters(in: " \t\r")
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      guard let key = Self.hexBytes(trimmed) else {
        throw AttachmentError(
          .invalidConfiguration,
          "Line \(number + 1) of the key file is not a hex key (an even count of 0-9a-f).")
      }
      keys.append(key)
    }
    try self.init(keys: keys)
  }

  /// A signer with the keys of the file at `path` (see ``init(keyFileText:)``).
  /// - Throws: `invalid_configuration` when the file cannot be read (the message names it and
  ///   the system's reason: missing, a directory, permission denied) or holds no valid key.
  public init(keyFile path: String) throws(AttachmentError) {
    switch FileSystem.smallFile(path) {
    case .success(let bytes):
      try self.init(keyFileText: String(decoding: bytes, as: UTF8.self))
    case .failure(let failure):
      throw AttachmentError(
        .invalidConfiguration,
        "The key file \(Redaction.escapeControlCharacters(path)) cannot be read: \(failure.reason).")
    }
  }

  /// The signature of `url` for `route` (expiring at `expires`, Unix seconds, when given) with
  /// the signing key: 64 lowercase hex digits.
  /// - Throws: `invalid_configuration` when libcrypto cannot be loaded or fails.
  public func signature(
    for url: String, route: ProxyRoute = .attachment, expires: Int64? = nil, profile: String? = nil
  ) throws(AttachmentError) -> String {
    Hex.encode(
      try Self.hmac(
        key: keys[0], message: Self.message(for: url, route: route, expiry: expires, profile: profile)))
  }

  /// The bytes a signature covers. Without an expiry, the file route signs the URL's UTF-8
  /// bytes alone, as it always has, so every attachment URL already in a push keeps verifying,
  /// and every other route signs its name, a line feed, then the URL (`info\n<url>`). With an
  /// expiry, every route signs `expires`, its name, the expiry in decimal and the URL, each line
  /// ended by a line feed. No URL the proxy accepts holds a line feed
  /// (``ProxyPath/acceptableURL(_:)``), so no message of one form or route is the message of
  /// another: an attachment URL does not open `/v1/info/…`, and an old path cannot be given an
  /// expiry or lose one. A path that names a profile signs `profile`, the profile's name, each
  /// ended by a line feed, then the message of the same path without it: a signature for one
  /// profile (or none) verifies for no other.
  static func message(for url: String, route: ProxyRoute, expiry: Int64?, profile: String? = nil) -> [UInt8] {
    if let profile {
      return Array("profile\n\(profile)\n".utf8) + message(for: url, route: route, expiry: expiry)
    }
    if let expiry { return Array("expires\n\(route.name)\n\(expiry)\n".utf8) + Array(url.utf8) }
    return route.signsURLAlone ? Array(url.utf8) : Array("\(route.name)\n".utf8) + Array(url.utf8)
  }

  /// Whether `signature` (hex, as in a path) is the signature of `url` for `route` (expiring at
  /// `expires`, when given) under any key. Compares in constant time (`CRYPTO_memcmp`) with every
  /// key; `false` for anything but 64 lower-case hex digits (the one spelling this signer
  /// prints, so one signed URL has one spelling), for a signature made for another route or
  /// expiry, and when libcrypto is missing. Whether the expiry has passed is not its concern
  /// (``url(of:now:)``).
  public func verify(
    signature: some StringProtocol, for url: String, route: ProxyRoute = .attachment, expires: Int64? = nil,
    profile: String? = nil
  ) -> Bool {
    guard signature.utf8.count == 64,
      signature.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
      let given = Self.hexBytes(signature)
    else { return false }
    let message = Self.message(for: url, route: route, expiry: expires, profile: profile)
    var matched = false
    for key in keys {
      guard let library = Libcrypto.shared, let expected = try? Self.hmac(key: key, message: message) else {
        return false
      }
      let equal = given.withUnsafeBytes { lhs in
        expected.withUnsafeBytes { rhs in
          library.constantTimeCompare(lhs.baseAddress, rhs.baseAddress, 32) == 0
        }
      }
      matched = matched || equal
    }
    return matched
  }

  /// HMAC-SHA256 of `message` under `key` (32 bytes).
  /// - Throws: `invalid_configuration` when libcrypto is missing or fails.
  static func hmac(key: [UInt8], message: [UInt8]) throws(AttachmentError) -> [UInt8] {
    guard let library = Libcrypto.shared else {
      throw AttachmentError(.invalidConfiguration, "libcrypto (libcrypto.so.3) is not installed.")
    }
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    let result = key.withUnsafeBytes { keyBytes in
      message.withUnsafeBufferPointer { data in
        digest.withUnsafeMutableBufferPointer { out in
          library.hmac(
            library.sha256(), keyBytes.baseAddress, Int32(keyBytes.count), data.baseAddress, data.count,
            out.baseAddress, &length)
        }
      }
    }
    guard result != nil, length == 32 else {
      throw AttachmentError(.invalidConfiguration, "libcrypto could not compute an HMAC-SHA256.")
    }
    return digest
  }

  /// The bytes of an even-length string of hex digits (either case), or `nil`.
  static func hexBytes(_ text: some StringProtocol) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
      out.append(high << 4 | low)
      index += 2
    }
    return out
  }

  private static func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
