import AttachmentKit

/// A proxy path (`/v1/…`) taken apart by its route's row (``ProxyRoute``), from the path alone:
/// nothing is verified or decrypted yet (``URLSigner/url(of:now:)`` does that).
public struct ProxyPath: Sendable, Equatable {
  /// What the path carries after its route, signature and expiry.
  public enum Payload: Sendable, Equatable {
    /// A URL in the clear (signed or unsigned routes).
    case url(String)
    /// `nonce ‖ ciphertext ‖ tag` of a sealed route (the origin hidden).
    case sealed([UInt8])
  }

  /// Why a path does not parse: each is answered `400 bad_request` with its ``message``.
  public enum Problem: Error, Sendable, Equatable {
    /// No route has this name, or the path has a count of segments no form of it has.
    case unknownForm
    /// The URL or sealed segment is not canonical base64url of what it must hold.
    case badEncoding
    /// The expiry segment is not Unix seconds in decimal without a leading zero.
    case badExpiry

    /// The text of the `400` answer.
    public var message: String {
      switch self {
      case .unknownForm:
        "A proxy path is "
          + ProxyRoute.all.filter { $0.protection != .unsigned }.map(\.forms).joined(separator: ", ")
          + "."
      case .badEncoding: "The URL in the path is not base64url (without padding) of a UTF-8 URL."
      case .badExpiry: "The expiry in the path is not Unix seconds in decimal with no leading zero."
      }
    }
  }

  /// The route's row.
  public let route: ProxyRoute
  /// The signature as sent (hex, checked by ``URLSigner/verify(signature:for:route:expires:)``);
  /// `nil` for a sealed or unsigned route.
  public let signature: String?
  /// The expiry, in Unix seconds, or `nil` for a path that does not expire.
  public let expiry: Int64?
  /// The URL or the sealed URL.
  public let payload: Payload
  /// The profile the path names (`/v1/<profile>/<route>/…`, covered by the signature or the
  /// seal), or `nil` for the `ios` profile, which has no segment (one spelling per path).
  public let profile: String?

  /// A path from its parts (what ``parse(_:)`` returns; tests build the old forms with it).
  public init(route: ProxyRoute, signature: String?, expiry: Int64?, payload: Payload, profile: String? = nil)
  {
    (self.route, self.signature, self.expiry, self.payload) = (route, signature, expiry, payload)
    self.profile = profile
  }

  /// The profiles a path may name: every standard profile but `ios`, the default, which is
  /// named by no segment.
  public static let profileNames: Set<String> = Set(AttachmentProfile.standard.keys).subtracting(["ios"])

  /// The URL in the clear, or `nil` for a sealed one (not opened yet).
  public var clearURL: String? {
    if case .url(let url) = payload { url } else { nil }
  }

  /// The longest base64url segment taken for a URL, in characters (a URL of about 8 KiB).
  public static let longestEncodedURL = 11_000

  /// The path whose segments after `/v1/` are `segments` (`["a", "<sig>", "<enc>"]`), bytes as
  /// sent. Each form has one spelling: the segment count picks the form, the expiry has one
  /// decimal spelling, base64url has no padding and no stray bits.
  public static func parse(_ segments: ArraySlice<Substring.UTF8View>) -> Result<ProxyPath, Problem> {
    var segments = segments
    var profile: String?
    if let first = segments.first, ProxyRoute.named(first) == nil,
      let name = profileNames.first(where: { $0.utf8.elementsEqual(first) })
    {
      profile = name
      segments = segments.dropFirst()
    }
    guard let name = segments.first, let route = ProxyRoute.named(name) else { return .failure(.unknownForm) }
    let rest = Array(segments.dropFirst())
    let expiring: Bool
    if rest.count == route.segmentCount(expiring: false) {
      expiring = false
    } else if route.canExpire && rest.count == route.segmentCount(expiring: true) {
      expiring = true
    } else {
      return .failure(.unknownForm)
    }
    var expiry: Int64?
    if expiring {
      guard let parsed = SignatureExpiry.parse(rest[rest.count - 2]) else { return .failure(.badExpiry) }
      expiry = parsed
    }
    let signature = route.protection == .signed ? String(decoding: rest[0], as: UTF8.self) : nil
    guard let last = rest.last else { return .failure(.unknownForm) }
    let payload: Payload
    if route.protection == .sealed {
      guard last.count <= longestEncodedURL + 40, let bytes = Base64URL.decode(bytes: last),
        bytes.count > AESGCM.nonceBytes + AESGCM.tagBytes
      else { return .failure(.badEncoding) }
      payload = .sealed(bytes)
    } else {
      guard last.count <= longestEncodedURL, let bytes = Base64URL.decode(bytes: last),
        let url = acceptableURL(bytes)
      else { return .failure(.badEncoding) }
      payload = .url(url)
    }
    if profile != nil, route.protection == .unsigned { return .failure(.unknownForm) }
    return .success(
      ProxyPath(route: route, signature: signature, expiry: expiry, payload: payload, profile: profile))
  }

  /// `bytes` as a URL a proxy path may carry: non-empty UTF-8 text with no space and no control
  /// character (C0, DEL or C1), at most ``longestEncodedURL`` characters once encoded; else `nil`.
  /// No such URL holds a line feed, which keeps each route's signed message apart.
  public static func acceptableURL(_ bytes: [UInt8]) -> String? {
    guard !bytes.isEmpty, (bytes.count * 4 + 2) / 3 <= longestEncodedURL,
      let text = String(validating: bytes, as: UTF8.self),
      !text.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }),
      !text.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) })
    else { return nil }
    return text
  }
}
