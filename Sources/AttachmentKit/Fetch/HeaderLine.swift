/// One raw header line as libcurl delivers it to the header callback, classified.
enum HeaderLine: Equatable {
  /// A status line (`HTTP/1.1 200 OK`, `HTTP/2 304`) with its code.
  case status(Int)
  /// A `Name: value` field (value trimmed).
  case field(name: String, value: String)
  /// The empty line that ends a response's headers.
  case end
  /// Anything else (a folded continuation, garbage): ignored.
  case other

  /// Classifies a line, CRLF included.
  init(_ bytes: UnsafeRawBufferPointer) {
    var end = bytes.count
    while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
    if end == 0 {
      self = .end
      return
    }
    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
    if text.hasPrefix("HTTP/") {
      let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
      if parts.count >= 2, let code = Int(parts[1]), (100...999).contains(code) {
        self = .status(code)
      } else {
        self = .other
      }
      return
    }
    guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
      self = .other
      return
    }
    let name = String(text[..<colon])
    let value = text[text.index(after: colon)...].trimmingCharacters(in: " \t")
    self = .field(name: name, value: value)
  }
}
