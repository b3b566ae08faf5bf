/// When a presigned URL stops being valid, read from its own query as the services spell it:
/// S3 and Google Cloud Storage's V4 signing (`X-Amz-Date` + `X-Amz-Expires`, `X-Goog-Date` +
/// `X-Goog-Expires`), the V2 forms and CloudFront's canned policy (`Expires`, Unix seconds),
/// and Azure's shared access signatures (`se`, an ISO 8601 instant). A URL past it is refused
/// without a request (the origin would refuse it), and a confirmed one is remembered until it
/// (``AttachmentPipeline``'s hit confirmation).
enum PresignedExpiry {
  /// The instant `url` expires, in seconds since 1970, or `nil` when its query names none.
  static func expiry(of url: String) -> Double? {
    guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
    var values: [Substring: Substring] = [:]
    for pair in query.prefix(while: { $0 != "#" }).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      if parts.count == 2, values[parts[0]] == nil { values[parts[0]] = parts[1] }
    }
    for (date, expires) in [("X-Amz-Date", "X-Amz-Expires"), ("X-Goog-Date", "X-Goog-Expires")] {
      if let start = values[Substring(date)].flatMap(Self.compactInstant),
        let seconds = values[Substring(expires)].flatMap({ Double($0) }), seconds >= 0
      {
        return start + seconds
      }
    }
    if let seconds = values["Expires"].flatMap({ Double($0) }), seconds > 0 { return seconds }
    if let text = values["se"], let instant = isoInstant(percentDecoded(text)) { return instant }
    return nil
  }

  /// The refusal of `url` when it has expired by `now` (seconds since 1970), else `nil`.
  static func refusal(of url: AttachmentURL, now: Double) -> AttachmentError? {
    guard let expiry = expiry(of: url.text), expiry <= now else { return nil }
    return AttachmentError(
      .presignedURLExpired,
      "The presigned URL expired \(Int(now - expiry)) s ago (its query says so); the origin would refuse it.")
  }

  /// `20261207T043110Z` (SigV4's `X-Amz-Date`) as seconds since 1970.
  private static func compactInstant(_ text: Substring) -> Double? {
    let digits = Array(text.utf8)
    guard digits.count == 16, digits[8] == UInt8(ascii: "T"), digits[15] == UInt8(ascii: "Z") else {
      return nil
    }
    func number(_ range: Range<Int>) -> Int? { Int(String(decoding: digits[range], as: UTF8.self)) }
    guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
      let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15)
    else { return nil }
    return seconds(year, month, day, hour, minute, second)
  }

  /// `2026-12-07T04:31:10Z` or `2026-12-07` (Azure's `se`) as seconds since 1970.
  private static func isoInstant(_ text: String) -> Double? {
    let digits = Array(text.utf8)
    func number(_ range: Range<Int>) -> Int? {
      range.upperBound <= digits.count ? Int(String(decoding: digits[range], as: UTF8.self)) : nil
    }
    guard digits.count >= 10, digits[4] == UInt8(ascii: "-"), digits[7] == UInt8(ascii: "-"),
      let year = number(0..<4), let month = number(5..<7), let day = number(8..<10)
    else { return nil }
    guard digits.count > 10 else { return seconds(year, month, day, 0, 0, 0) }
    guard digits.count >= 20, digits[10] == UInt8(ascii: "T"), let hour = number(11..<13),
      let minute = number(14..<16), let second = number(17..<19)
    else { return nil }
    return seconds(year, month, day, hour, minute, second)
  }

  /// A civil date and time in UTC as seconds since 1970 (days from civil, proleptic Gregorian).
  private static func seconds(
    _ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int
  )
    -> Double?
  {
    guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
      (0...59).contains(minute),
      (0...60).contains(second)
    else { return nil }
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
  }

  /// `%3A` and the like decoded (Azure writes `se=2026-12-07T04%3A31%3A10Z`).
  private static func percentDecoded(_ text: Substring) -> String {
    var out: [UInt8] = []
    var bytes = text.utf8[...]
    while let byte = bytes.popFirst() {
      if byte == UInt8(ascii: "%"), bytes.count >= 2,
        let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
      {
        out.append(value)
        bytes = bytes.dropFirst(2)
      } else {
        out.append(byte)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}
