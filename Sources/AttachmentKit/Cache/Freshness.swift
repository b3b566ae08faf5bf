/// HTTP freshness (RFC 9111 §4.2) as plain functions over stored headers and clocks.
enum Freshness {
  /// What the response headers allow a cache to do.
  struct Policy: Equatable, Sendable {
    /// `no-store`: the response must not be kept.
    var noStore = false
    /// `private` seen by a shared cache: the response is delivered but not kept (its lifetime
    /// is still the one its receiver may keep it for).
    var isPrivateToSharedCache = false
    /// How long the response stays fresh from the moment it was received, in seconds
    /// (0: revalidate before every use).
    var lifetime: Double
  }

  /// The policy for a response received at `now` (seconds since 1970).
  ///
  /// Lifetime comes from `max-age` (for a `shared` cache `s-maxage` first, RFC 9111 §4.2.1),
  /// else `Expires − Date`, else 10 % of `Date − Last-Modified`, else `defaultLifetime`.
  /// `no-cache` gives a lifetime of 0; `no-store` forbids storing, and so does `private` for a
  /// `shared` cache (§3.5).
  static func policy(
    cacheControl: String?, expires: String?, date: String?, lastModified: String?, now: Double,
    defaultLifetime: Double, shared: Bool = false
  ) -> Policy {
    let directives = CacheControlDirectives(cacheControl)
    var policy = privatePolicy(
      directives, expires: expires, date: date, lastModified: lastModified, now: now,
      defaultLifetime: defaultLifetime)
    guard shared, !policy.noStore else { return policy }
    policy.isPrivateToSharedCache = directives.isPrivate
    // s-maxage is for shared caches only, and never outweighs no-cache.
    if let sharedMaxAge = directives.sharedMaxAge, !directives.noCache, !directives.isPrivate {
      policy.lifetime = sharedMaxAge
    }
    return policy
  }

  /// The policy of a private cache (``policy(cacheControl:expires:date:lastModified:now:defaultLifetime:shared:)``
  /// with `shared` false).
  private static func privatePolicy(
    _ directives: CacheControlDirectives, expires: String?, date: String?, lastModified: String?,
    now: Double, defaultLifetime: Double
  ) -> Policy {
    if directives.noStore { return Policy(noStore: true, lifetime: 0) }
    if directives.noCache { return Policy(lifetime: 0) }
    if let maxAge = directives.maxAge { return Policy(lifetime: maxAge) }
    let served = date.flatMap(HTTPDate.parse) ?? now
    if let expires {
      // An invalid Expires (such as "0") means already expired.
      guard let expiry = HTTPDate.parse(expires) else { return Policy(lifetime: 0) }
      return Policy(lifetime: max(0, expiry - served))
    }
    if let modified = lastModified.flatMap(HTTPDate.parse), modified < served {
      return Policy(lifetime: (served - modified) / 10)
    }
    return Policy(lifetime: defaultLifetime)
  }

  /// Whether `cacheControl` holds `private` (bare or naming fields), in any case.
  static func isPrivate(_ cacheControl: String?) -> Bool {
    CacheControlDirectives(cacheControl).isPrivate
  }
}
