import Glibc

/// The record object's bytes: a record's text, and for a small entry its content too, so that a
/// store hit of a small file is one request (the record) instead of two (the record, then the
/// content object): `attachkit-inline 1 LENGTH\n`, the record's LENGTH bytes of text, then the
/// content. A larger entry's record object is the record's text alone, and its content is read
/// from its content object. The content object is written first either way (a record is never
/// written before its content exists), and inline bytes are checked against the record's
/// SHA-256 as a content object's are.
extension FleetStore {
  /// The largest content kept inline in its record object: 256 KiB (most push images).
  static let inlineLimit: Int64 = 256 * 1024

  /// The first bytes of a record object that carries its content.
  private static let inlineMagic = Array("attachkit-inline 1 ".utf8)

  /// The largest record object a read accepts: a record's text (64 KiB at most) and inline
  /// content.
  static var recordObjectLimit: Int { (1 << 16) + Int(inlineLimit) + 64 }

  /// The record object of `text` with `content` inline (when given).
  static func recordObject(_ text: [UInt8], inline content: [UInt8]?) -> [UInt8] {
    guard let content else { return text }
    return inlineMagic + Array("\(text.count)\n".utf8) + text + content
  }

  /// A record object split into the record's text and its inline content (`nil` when it has
  /// none); `nil` when it announces inline content and is malformed.
  static func splitRecordObject(_ bytes: [UInt8]) -> (text: ArraySlice<UInt8>, inline: ArraySlice<UInt8>?)? {
    guard bytes.starts(with: inlineMagic) else { return (bytes[...], nil) }
    let afterMagic = bytes.index(bytes.startIndex, offsetBy: inlineMagic.count)
    guard let newline = bytes[afterMagic...].prefix(12).firstIndex(of: UInt8(ascii: "\n")),
      let length = Int(String(decoding: bytes[afterMagic..<newline], as: UTF8.self)), length >= 0,
      length <= bytes.count - newline - 1
    else { return nil }
    let textStart = newline + 1
    return (bytes[textStart..<textStart + length], bytes[(textStart + length)...])
  }

  /// The whole content of the file open at `descriptor` (read from its start), for an entry of
  /// `bytes` bytes at most ``inlineLimit``; `nil` for a larger one or when it cannot be read.
  static func inlineContent(_ descriptor: Int32, bytes: Int64) -> [UInt8]? {
    guard bytes <= inlineLimit else { return nil }
    var content = [UInt8](repeating: 0, count: Int(bytes))
    var done = 0
    while done < content.count {
      let count = content.withUnsafeMutableBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        return pread(descriptor, base + done, buffer.count - done, off_t(done))
      }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return nil }
      done += count
    }
    return content
  }
}
