/// The directives of a `Cache-Control` header that decide how long a copy lives and who may
/// keep it (RFC 9111 §5.2.2): read once, by the freshness rules of the cache and by serve's
/// answer to a tier. Names are case-insensitive; arguments may be quoted; unknown directives
/// are ignored.
package struct CacheControlDirectives: Sendable, Equatable {
  /// `no-store`: no cache keeps the answer.
  package var noStore = false
  /// `no-cache`: a copy is revalidated before every use.
  package var noCache = false
  /// `private`, bare or naming fields (either way the answer is not for a shared cache).
  package var isPrivate = false
  /// `must-revalidate`.
  package var mustRevalidate = false
  /// `proxy-revalidate`.
  package var proxyRevalidate = false
  /// `s-maxage`, in seconds (a shared cache's lifetime); 0 when its argument is not a number.
  package var sharedMaxAge: Double?
  /// `max-age`, in seconds; 0 when its argument is not a number.
  package var maxAge: Double?

  /// The directives of `header` (`nil`: none).
  package init(_ header: String?) {
    for directive in (header ?? "").split(separator: ",") {
      let parts = directive.split(separator: "=", maxSplits: 1).map { part in
        let trimmed = part.drop(while: Self.isPadding).reversed().drop(while: Self.isPadding).reversed()
        return String(trimmed).lowercased()
      }
      switch parts.first {
      case "no-store": noStore = true
      case "no-cache": noCache = true
      case "private": isPrivate = true
      case "must-revalidate": mustRevalidate = true
      case "proxy-revalidate": proxyRevalidate = true
      case "s-maxage": sharedMaxAge = Self.seconds(parts)
      case "max-age": maxAge = Self.seconds(parts)
      default: break
      }
    }
  }

  private static func isPadding(_ character: Character) -> Bool {
    character == " " || character == "\t" || character == "\""
  }

  /// A delta-seconds argument, never negative; 0 when missing or not a number.
  private static func seconds(_ parts: [String]) -> Double {
    parts.count == 2 ? Double(parts[1]).map { max(0, $0) } ?? 0 : 0
  }
}
