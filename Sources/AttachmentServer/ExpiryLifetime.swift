/// An expiring path's answer may not outlive its signature: a tier or a device that kept it
/// past the expiry would serve a URL serve now refuses. Its `max-age` and `s-maxage` are cut to
/// the seconds the path has left; every other directive is kept as it is.
enum ExpiryLifetime {
  /// `cacheControl` with each `max-age=N` and `s-maxage=N` at most `secondsLeft` (at least 0).
  /// A value with neither (`no-store`, `no-cache`) is returned unchanged.
  static func capped(_ cacheControl: String, secondsLeft: Int64) -> String {
    let limit = max(0, secondsLeft)
    var changed = false
    let directives = cacheControl.split(separator: ",").map { raw -> String in
      let directive = raw.trimmingPrefix(" ")
      for name in ["max-age=", "s-maxage="] where directive.hasPrefix(name) {
        guard let value = Int64(directive.dropFirst(name.count)), value > limit else {
          return String(directive)
        }
        changed = true
        return name + String(limit)
      }
      return String(directive)
    }
    return changed ? directives.joined(separator: ", ") : cacheControl
  }

  /// `headers` with their `Cache-Control` capped (see ``capped(_:secondsLeft:)``) when `route`
  /// is an expiring proxy path; unchanged otherwise.
  static func headers(_ headers: [(String, String)], route: Route, now: Int64) -> [(String, String)] {
    guard case .proxy(let path) = route, let expiry = path.expiry else { return headers }
    return headers.map { name, value in
      name == "Cache-Control" ? (name, capped(value, secondsLeft: expiry - now)) : (name, value)
    }
  }
}
