/// Reads sizes in bytes as people type them: `500`, `500B`, `10MB`, `1.5GiB`, `64k`.
///
/// Decimal units are powers of 1000 (`K`/`KB`, `M`/`MB`, `G`/`GB`, `T`/`TB`), binary units
/// powers of 1024 (`Ki`/`KiB`, `Mi`/`MiB`, `Gi`/`GiB`, `Ti`/`TiB`); letter case does not matter
/// and a space may sit between number and unit. A fraction is allowed when the result is a whole
/// number of bytes.
public enum ByteCount {
  /// The number of bytes `text` stands for, or `nil` when it is not a size (no digits, an unknown
  /// unit, a negative number, a fraction of a byte, or more than `Int64.max`).
  public static func parse(_ text: String) -> Int64? {
    let number = text.prefix { $0.isASCIIDigit || $0 == "." }
    let unit = text.dropFirst(number.count).drop { $0 == " " }
    guard let multiplier = multiplier(for: unit.lowercased()) else { return nil }
    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, parts.contains(where: { !$0.isEmpty }) else { return nil }
    let fraction = parts.count == 2 ? parts[1] : ""
    guard let mantissa = Int64(parts[0] + fraction, radix: 10) else { return nil }
    return scaled(mantissa, by: multiplier, droppingDecimals: fraction.count)
  }

  /// `mantissa × multiplier ÷ 10^decimals`, or `nil` on overflow or a fraction of a byte.
  private static func scaled(_ mantissa: Int64, by multiplier: Int64, droppingDecimals decimals: Int)
    -> Int64?
  {
    let (product, overflow) = mantissa.multipliedReportingOverflow(by: multiplier)
    guard !overflow else { return nil }
    var divisor: Int64 = 1
    for _ in 0..<decimals {
      let (next, tooMany) = divisor.multipliedReportingOverflow(by: 10)
      guard !tooMany else { return nil }
      divisor = next
    }
    return product % divisor == 0 ? product / divisor : nil
  }

  /// The size of one `unit` (already lower-cased), or `nil` for an unknown unit.
  private static func multiplier(for unit: String) -> Int64? {
    switch unit {
    case "", "b": 1
    case "k", "kb": 1_000
    case "m", "mb": 1_000_000
    case "g", "gb": 1_000_000_000
    case "t", "tb": 1_000_000_000_000
    case "ki", "kib": 1 << 10
    case "mi", "mib": 1 << 20
    case "gi", "gib": 1 << 30
    case "ti", "tib": 1 << 40
    default: nil
    }
  }
}
