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

  /// Splits `url`, or returns `nil` when it has no `scheme://`. Works on the UTF-8 bytes: every
  /// delimiter is ASCII, which UTF-8 never uses inside another character, so each split falls
  /// on a character boundary (and a hit parses its URL without walking grapheme clusters).
  init?(_ url: String) {
    let bytes = url.utf8
    let colon = UInt8(ascii: ":")
    let slash = UInt8(ascii: "/")
    // The first `://` anywhere (as a search of the text would find it).
    var index = bytes.startIndex
    var separator: String.Index?
    while index != bytes.endIndex {
      if bytes[index] == colon {
        let next = bytes.index(after: index)
        if next != bytes.endIndex, bytes[next] == slash {
          let third = bytes.index(after: next)
          if third != bytes.endIndex, bytes[third] == slash {
            separator = index
            break
          }
        }
      }
      index = bytes.index(after: index)
    }
    guard let separator else { return nil }
    scheme = url[..<separator]
    let start = bytes.index(separator, offsetBy: 3)
    let end =
      bytes[start...].firstIndex { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
      ?? bytes.endIndex
    range = start..<end
    var hostPort = url[start..<end]
    if let at = hostPort.utf8.lastIndex(of: UInt8(ascii: "@")) {
      userInfo = hostPort[..<at]
      hostPort = hostPort[hostPort.utf8.index(after: at)...]
    } else {
      userInfo = nil
    }
    let hostBytes = hostPort.utf8
    if hostBytes.first == UInt8(ascii: "["), let close = hostBytes.firstIndex(of: UInt8(ascii: "]")) {
      let afterClose = hostBytes.index(after: close)
      host = hostPort[..<afterClose]
      let rest = hostPort[afterClose...]
      port = rest.utf8.first == colon ? rest[rest.utf8.index(after: rest.startIndex)...] : nil
    } else if let portColon = hostBytes.lastIndex(of: colon) {
      host = hostPort[..<portColon]
      port = hostPort[hostBytes.index(after: portColon)...]
    } else {
      host = hostPort
      port = nil
    }
  }
}
