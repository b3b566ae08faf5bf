@testable import AttachmentKit

/// Formatting HTTP dates: only the tests need it (to write the headers the cache parses), so
/// it lives here, not in the product.
extension HTTPDate {
  /// The IMF-fixdate for seconds since 1970.
  static func format(_ seconds: Double) -> String {
    let total = Int(seconds.rounded(.down))
    let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
    let secondsOfDay = total - days * 86_400
    let (year, month, day) = civilFromDays(days)
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return
      "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
  }

  fileprivate static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }
}
