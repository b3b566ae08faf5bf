/// The parts of an absolute URL's authority (`scheme://userinfo@host:port`), split in one
/// place so the URL check, the address guard and redaction agree on where the host is.
///
/// It only splits text; it never percent-decodes and never resolves anything.
struct URLAuthority {
  /// The scheme as written, before `://`.
  let scheme: Substring
  /// `user:password` before the last `@` of the authority, when present.
  let userInfo: Substring?
  /// The host: a name, an IPv4 literal, or an IPv6 literal with its brackets.
  let host: Substring
  /// The port after the host, without the colon, when present.
  let port: Substring?
  /// The range of the whole authority (between `://` and the first `/`, `?` or `#`).
  let range: Range<String.Index>

  /// Splits `url`, or returns `nil` when it has no `scheme://`.
  init?(_ url: String) {
    guard let separator = url.firstRange(of: "://") else { return nil }
    scheme = url[..<separator.lowerBound]
    let start = separator.upperBound
    let end = url[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
    range = start..<end
    var hostPort = url[start..<end]
    if let at = hostPort.lastIndex(of: "@") {
      userInfo = hostPort[..<at]
      hostPort = hostPort[hostPort.index(after: at)...]
    } else {
      userInfo = nil
    }
    if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
      host = hostPort[...close]
      let rest = hostPort[hostPort.index(after: close)...]
      port = rest.hasPrefix(":") ? rest.dropFirst() : nil
    } else if let colon = hostPort.lastIndex(of: ":") {
      host = hostPort[..<colon]
      port = hostPort[hostPort.index(after: colon)...]
    } else {
      host = hostPort
      port = nil
    }
  }
}
