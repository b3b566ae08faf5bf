/// A URL prefix: a scheme, a host, a port (the scheme's default when none is written) and an
/// optional path. A URL is under it when its scheme, host (compared lower-cased) and port are
/// the prefix's and its path, as an origin reads it, starts with the prefix's at a segment
/// boundary (`/push` holds `/push` and `/push/a.jpg`, not `/pushover`). What ``OriginAllowlist``
/// and ``OriginHeaders`` match URLs against.
///
/// Paths are compared as an origin will read them (RFC 3986 §6.2.2): percent-encoded unreserved
/// characters decoded (`/%70ush/` is `/push/`). A path an origin could read as another one is
/// under no prefix with a path (`Parts.isAmbiguous`): a dot segment (`..`, `.`, `%2e%2e`, a
/// segment of dots only), an encoded `/`, `\` or NUL (`%2F`, `%5C`, `%00`, in any case, and
/// double-encoded: `%252F`), a double-encoded dot or percent (`%252e`, `%2525`), a backslash, or
/// a `;` (path parameters: `..;/` is `../` to Tomcat). libcurl sends such a path as written and an
/// origin that decodes, then normalises, serves what lies outside the prefix. Empty segments are
/// left alone: an origin that merges `//` reads a path under the prefix as under it. A host with
/// a percent escape matches nothing.
public struct URLPrefix: Sendable, Hashable {
  /// `http` or `https`, lower-cased.
  public let scheme: String
  /// The host, lower-cased (an IPv6 literal with its brackets).
  public let host: String
  /// The port.
  public let port: Int
  /// The path the URL's must start with; empty for any path.
  public let path: String

  /// Parses `text`, an http(s) URL with a host and no query or fragment; `nil` otherwise.
  public init?(_ text: String) {
    guard !text.contains("?"), !text.contains("#"), let parts = Parts(text), !parts.isAmbiguous else {
      return nil
    }
    scheme = parts.scheme
    host = parts.host
    port = parts.port
    path = parts.path == "/" ? "" : parts.path
  }

  /// Whether the absolute `url` is under this prefix.
  public func matches(_ url: String) -> Bool { Parts(url).map(matches) ?? false }

  func matches(_ parts: Parts) -> Bool {
    parts.scheme == scheme && parts.host == host && parts.port == port
      && (path.isEmpty || (!parts.isAmbiguous && Self.path(parts.path, isUnder: path)))
  }

  /// What a URL is compared by.
  struct Parts {
    var scheme: String
    var host: String
    var port: Int
    /// The path as an origin reads it: percent-encoded unreserved characters decoded, every
    /// other escape kept as written.
    var path: String
    /// Whether an origin could read the path as another one (see ``URLPrefix``): then it is
    /// under no prefix with a path.
    var isAmbiguous: Bool

    /// A URL's scheme, host (lower-cased), port (the scheme's default when none) and path;
    /// `nil` for anything but an http(s) URL with a host without percent escapes.
    init?(_ url: String) {
      // A percent-encoded host is decoded by libcurl, not here: it matches nothing.
      guard let authority = URLAuthority(url), !authority.host.isEmpty, !authority.host.contains("%") else {
        return nil
      }
      let scheme = authority.scheme.lowercased()
      guard scheme == "http" || scheme == "https" else { return nil }
      if let text = authority.port, !text.isEmpty {
        guard let value = Int(text), (1...65535).contains(value) else { return nil }
        port = value
      } else {
        port = scheme == "https" ? 443 : 80
      }
      var rest = url[authority.range.upperBound...]
      if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
      let written = rest.isEmpty ? "/" : String(rest)
      path = PathNormalization.decodingUnreserved(written)
      isAmbiguous = PathNormalization.isAmbiguous(written: written, decoded: path)
      self.scheme = scheme
      host = authority.host.lowercased()
    }
  }

  /// Whether `path` is `prefix` or lies under it at a segment boundary.
  private static func path(_ path: String, isUnder prefix: String) -> Bool {
    let bytes = Array(path.utf8)
    guard bytes.starts(with: prefix.utf8) else { return false }
    let length = prefix.utf8.count
    return prefix.utf8.last == UInt8(ascii: "/") || bytes.count == length
      || bytes[length] == UInt8(ascii: "/")
  }
}

/// How a URL path is read the way an origin reads it, for ``URLPrefix``.
enum PathNormalization {
  /// `path` with every percent-encoded unreserved character (`A-Z a-z 0-9 - . _ ~`, RFC 3986
  /// §2.3) decoded; every other escape kept as written, its hex digits upper-cased (§6.2.2.1).
  static func decodingUnreserved(_ path: String) -> String {
    let bytes = Array(path.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = 0
    while index < bytes.count {
      if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
        let high = Hex.value(of: bytes[index + 1]), let low = Hex.value(of: bytes[index + 2])
      {
        let value = high << 4 | low
        if isUnreserved(value) {
          out.append(value)
        } else {
          out.append(contentsOf: [UInt8(ascii: "%"), hexDigit(high), hexDigit(low)])
        }
        index += 3
      } else {
        out.append(bytes[index])
        index += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Whether an origin could read the path written as `written` (decoded as `decoded` by
  /// ``decodingUnreserved(_:)``) as another path: a dot segment, a segment of dots only, an
  /// encoded `/`, `\` or NUL at any depth of encoding, a double-encoded dot or percent, a
  /// backslash, or a `;`.
  static func isAmbiguous(written: String, decoded: String) -> Bool {
    let lower = written.lowercased()
    if lower.contains("\\") || lower.contains(";") { return true }
    // %2f %5c %00; and behind an encoded percent (`%25`: an origin that decodes twice), any of
    // them, a dot or another percent.
    for escape in ["%2f", "%5c", "%00"] where lower.contains(escape) { return true }
    for escape in ["%252e", "%252f", "%255c", "%2500", "%2525"] where lower.contains(escape) { return true }
    // A segment of dots only (`.`, `..`, and `...`, which some servers shorten), once decoded.
    return decoded.split(separator: "/", omittingEmptySubsequences: false).contains { segment in
      !segment.isEmpty && segment.allSatisfy { $0 == "." }
    }
  }

  private static func isUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
      UInt8(ascii: "~"):
      true
    default: false
    }
  }

  private static func hexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
  }
}
