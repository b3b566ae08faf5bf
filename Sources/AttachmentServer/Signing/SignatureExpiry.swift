/// The expiry of a signed path: a time in Unix seconds, written in the path in decimal with no
/// leading zero (one spelling), and the durations `attachkit sign --expires` takes.
public enum SignatureExpiry {
  /// The latest expiry a path may carry: 11 digits (the year 5138), so it always fits an `Int64`.
  public static let latest: Int64 = 99_999_999_999

  /// The longest duration `--expires` takes: ten years, in seconds.
  public static let longestDuration: Int64 = 3_650 * 86_400

  /// The path segment of `expiry`; `nil` when it is not in `1...latest`.
  public static func segment(_ expiry: Int64) -> String? {
    (1...latest).contains(expiry) ? String(expiry) : nil
  }

  /// The expiry a path segment spells: 1 to 11 ASCII digits, the first not `0`; `nil` for any
  /// other spelling (a sign, a leading zero, a space, a letter), so each expiry has one spelling.
  public static func parse(_ segment: some Collection<UInt8>) -> Int64? {
    guard (1...11).contains(segment.count), let first = segment.first, (0x31...0x39).contains(first) else {
      return nil
    }
    var value: Int64 = 0
    for digit in segment {
      guard (0x30...0x39).contains(digit) else { return nil }
      value = value * 10 + Int64(digit - 0x30)
    }
    return value
  }

  /// The seconds a duration names: a positive whole number and a unit, `s`, `m`, `h` or `d`
  /// (`90s`, `15m`, `1h`, `7d`); `nil` for zero, a sign, a fraction, another unit, or more than
  /// ``longestDuration``.
  public static func seconds(ofDuration text: String) -> Int64? {
    guard let unit = text.last, text.count >= 2, text.count <= 12 else { return nil }
    let scale: Int64
    switch unit {
    case "s": scale = 1
    case "m": scale = 60
    case "h": scale = 3_600
    case "d": scale = 86_400
    default: return nil
    }
    let digits = text.utf8.dropLast()
    guard digits.allSatisfy({ (0x30...0x39).contains($0) }),
      let count = Int64(String(decoding: digits, as: UTF8.self)),
      count > 0, count <= longestDuration / scale
    else { return nil }
    return count * scale
  }
}
