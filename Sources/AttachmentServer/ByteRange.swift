/// A `Range: bytes=…` request header's single range, resolved against a file's size.
enum ByteRange: Equatable {
  /// Serve these bytes (`206`): `offset` and `length` in bytes, `length` ≥ 1.
  case partial(offset: Int64, length: Int64)
  /// No byte of the file is in the range (`416`).
  case unsatisfiable
  /// Serve the whole file (`200`): no range, or a syntax this server does not answer partially
  /// (several ranges, another unit, an invalid range: RFC 9110 says to ignore those).
  case whole

  /// Resolves `header` (the `Range` value, or `nil`) against a file of `size` bytes.
  init(header: String?, size: Int64) {
    guard let header, header.hasPrefix("bytes=") else {
      self = .whole
      return
    }
    let spec = header.dropFirst("bytes=".count).filter { $0 != " " }
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
      self = .whole
      return
    }
    let first = spec[..<dash]
    let last = spec[spec.index(after: dash)...]
    let start: Int64
    let end: Int64
    if first.isEmpty {
      // A suffix: the last N bytes.
      guard let suffix = Self.number(last) else {
        self = .whole
        return
      }
      guard suffix > 0, size > 0 else {
        self = .unsatisfiable
        return
      }
      start = max(0, size - suffix)
      end = size - 1
    } else {
      guard let from = Self.number(first) else {
        self = .whole
        return
      }
      if last.isEmpty {
        end = size - 1
      } else {
        guard let to = Self.number(last), to >= from else {
          self = .whole
          return
        }
        end = min(to, size - 1)
      }
      guard from < size else {
        self = .unsatisfiable
        return
      }
      start = from
    }
    // A range covering the whole file is still answered 206: AVPlayer expects it.
    self = .partial(offset: start, length: end - start + 1)
  }

  private static func number(_ text: Substring) -> Int64? {
    guard !text.isEmpty, text.utf8.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else {
      return nil
    }
    return Int64(text)
  }
}
