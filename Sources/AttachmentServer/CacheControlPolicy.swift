import AttachmentKit

/// The `Cache-Control` of a file answer, following the origin's as a shared cache passes it on
/// (RFC 9111): what the origin forbade a shared cache is never made `public`.
///
/// - the origin said `no-store` (the copy was not kept): `no-store`;
/// - `no-cache`: `no-cache` (`private, no-cache` when it also said `private`);
/// - `private`: `private, max-age=N`, so a tier does not keep it and the device may;
/// - no freshness left (`max-age=0`, or an expired copy served): `max-age=0, must-revalidate`;
/// - otherwise `public, max-age=N`, N what is left of the origin's freshness, with the
///   origin's `s-maxage` (less the copy's age) for the tier and its `must-revalidate` and
///   `proxy-revalidate` passed on. serve's own copy lives by `s-maxage` when there is one (it is
///   a shared cache), so N is then what is left of the origin's `max-age`.
enum CacheControlPolicy {
  /// The longest lifetime given, a year (RFC 9111 §5.2.2.1 suggests no more).
  static let longest = 31_536_000

  /// The header value for `attachment` answered at `now` (seconds since 1970).
  static func header(for attachment: Attachment, now: Double) -> String {
    let directives = CacheControlDirectives(attachment.cacheControl)
    guard let freshUntil = attachment.freshUntil, !directives.noStore else { return "no-store" }
    let scope = directives.isPrivate ? "private" : "public"
    if directives.noCache { return directives.isPrivate ? "private, no-cache" : "no-cache" }
    let age = max(0, now - (attachment.fetchedAt ?? now))
    // serve's own copy lives by s-maxage (a shared cache's lifetime); the device's by max-age.
    let left =
      directives.sharedMaxAge != nil && directives.maxAge != nil
      ? seconds((directives.maxAge ?? 0) - age) : seconds(freshUntil - now)
    guard left > 0 else {
      return directives.isPrivate ? "private, max-age=0, must-revalidate" : "max-age=0, must-revalidate"
    }
    var parts = [scope, "max-age=\(left)"]
    if !directives.isPrivate, let shared = directives.sharedMaxAge {
      parts.append("s-maxage=\(seconds(shared - age))")
    }
    if directives.mustRevalidate { parts.append("must-revalidate") }
    if directives.proxyRevalidate { parts.append("proxy-revalidate") }
    return parts.joined(separator: ", ")
  }

  /// Whole seconds of `interval`, between 0 and ``longest``.
  private static func seconds(_ interval: Double) -> Int {
    guard interval.isFinite, interval > 0 else { return 0 }
    return Int(min(interval, Double(longest)))
  }
}
