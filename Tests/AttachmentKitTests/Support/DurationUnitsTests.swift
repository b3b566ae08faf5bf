import TestTraits
import Testing

@testable import AttachmentKit

/// The one place durations become numbers: exact at unit boundaries, rounding as documented.
@Suite("Duration units", .cpuBound)
struct DurationUnitsTests {
  @Test("seconds and milliseconds keep the fraction; whole units drop it; timeouts round up")
  func conversions() {
    let duration = Duration.seconds(2) + .microseconds(1500) + .nanoseconds(1)
    #expect(abs(duration.inSeconds - 2.001500001) < 1e-12)
    #expect(abs(duration.inMilliseconds - 2001.500001) < 1e-9)
    #expect(duration.wholeMicroseconds == 2_001_500)
    #expect(duration.wholeNanoseconds == 2_001_500_001)
    #expect(duration.millisecondsRoundedUp == 2002)
    #expect(Duration.milliseconds(7).millisecondsRoundedUp == 7)
    #expect(Duration.zero.millisecondsRoundedUp == 0)
    #expect(Duration.seconds(Int64.max).wholeNanoseconds == .max)
    #expect(Duration.seconds(Int64.min).wholeMicroseconds == .min)
  }
}
