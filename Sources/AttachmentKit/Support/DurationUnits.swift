/// A `Duration` in the units the library, its faces and its reports use, converted in one
/// place instead of by hand from `components` wherever a number is needed.
extension Duration {
  /// The duration in seconds, with its fraction.
  public var inSeconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }

  /// The duration in milliseconds, with its fraction.
  public var inMilliseconds: Double {
    Double(components.seconds) * 1e3 + Double(components.attoseconds) / 1e15
  }

  /// Whole microseconds, the fraction dropped (saturating at `Int64`'s range).
  public var wholeMicroseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds.multipliedReportingOverflow(by: 1_000_000).overflow
      ? (seconds < 0 ? .min : .max) : seconds * 1_000_000 + attoseconds / 1_000_000_000_000
  }

  /// Whole nanoseconds, the fraction dropped (saturating at `Int64`'s range).
  public var wholeNanoseconds: Int64 {
    let (seconds, attoseconds) = components
    return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
      ? (seconds < 0 ? .min : .max) : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
  }

  /// Whole milliseconds rounded up, so a timeout made from it never fires early (saturating).
  public var millisecondsRoundedUp: Int64 {
    let (seconds, attoseconds) = components
    let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return seconds.multipliedReportingOverflow(by: 1000).overflow
      ? (seconds < 0 ? .min : .max) : seconds * 1000 + fraction
  }
}
