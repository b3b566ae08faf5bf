/// HTTP dates (RFC 9110 §5.6.7) to and from seconds since 1970, with no Foundation.
enum HTTPDate {
  static let months = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
  ]

  /// Seconds since 1970 for an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), an RFC 850 date
  /// (`Sunday, 06-Nov-94 08:49:37 GMT`) or an asctime date (`Sun Nov  6 08:49:37 1994`);
  /// `nil` for anything else.
  static func parse(_ text: String) -> Double? {
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
    var day: Int?
    var month: Int?
    var year: Int?
    var time: String?
    if parts.count == 6, parts[5] == "GMT" {  // IMF-fixdate
      day = Int(parts[1])
      month = months.firstIndex(of: parts[2])
      year = Int(parts[3])
      time = parts[4]
    } else if parts.count == 4, parts[3] == "GMT" {  // RFC 850
      let dmy = parts[1].split(separator: "-").map(String.init)
      guard dmy.count == 3 else { return nil }
      day = Int(dmy[0])
      month = months.firstIndex(of: dmy[1])
      year = Int(dmy[2]).map { $0 < 70 ? $0 + 2000 : ($0 < 100 ? $0 + 1900 : $0) }
      time = parts[2]
    } else if parts.count == 5 {  // asctime
      month = months.firstIndex(of: parts[1])
      day = Int(parts[2])
      time = parts[3]
      year = Int(parts[4])
    }
    guard let day, let month, let year, let time, (1...31).contains(day), (1970...9999).contains(year)
    else { return nil }
    let hms = time.split(separator: ":").compactMap { Int($0) }
    guard hms.count == 3, (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2])
    else { return nil }
    let days = daysFromCivil(year: year, month: month + 1, day: day)
    return Double(days * 86_400 + hms[0] * 3_600 + hms[1] * 60 + hms[2])
  }

  // Howard Hinnant's days-from-civil (proleptic Gregorian calendar); its inverse, for
  // formatting, lives with the tests.
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

}
