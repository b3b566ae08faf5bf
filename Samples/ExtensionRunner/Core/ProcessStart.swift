import Foundation

/// When this process started, as a `ContinuousClock` instant, so the budget counts from the
/// launch (as iOS counts an extension's 30 s) rather than from `main`, which dynamic loading
/// delays by milliseconds, more on a busy machine.
public enum ProcessStart {
  /// The start of this process (to the kernel's clock tick, 10 ms), or `now` when
  /// `/proc/self/stat` cannot be read or says something implausible (more than 1 s ago).
  public static func instant(now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
    instant(now: now, age: age())
  }

  /// `now` less `age` when the age is plausible for a process that has just started (from 0
  /// to under 1 s), else `now`.
  static func instant(now: ContinuousClock.Instant, age: Duration?) -> ContinuousClock.Instant {
    guard let age, age >= .zero, age < .seconds(1) else { return now }
    return now - age
  }

  /// How long ago process `pid` (`self` by default) started: the boot-time clock now, less
  /// the start time that `/proc/PID/stat` gives in clock ticks since boot. `nil` when it
  /// cannot be read.
  static func age(pid: String = "self") -> Duration? {
    guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
      let text = String(data: data, encoding: .utf8),
      let startTicks = startTime(fromStat: text)
    else { return nil }
    let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
    var boot = timespec()
    guard ticksPerSecond > 0, clock_gettime(CLOCK_BOOTTIME, &boot) == 0 else { return nil }
    let nowNanoseconds = Int64(boot.tv_sec) * 1_000_000_000 + Int64(boot.tv_nsec)
    let startNanoseconds = startTicks * (1_000_000_000 / Int64(ticksPerSecond))
    return .nanoseconds(nowNanoseconds - startNanoseconds)
  }

  /// Field 22 (`starttime`) of a `/proc/PID/stat` line. The command name (field 2) is in
  /// parentheses and may hold spaces, so fields are counted after its closing parenthesis.
  static func startTime(fromStat text: String) -> Int64? {
    guard let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After ")": field 3 (state) is fields[0], so field 22 is fields[19].
    guard fields.count > 19 else { return nil }
    return Int64(fields[19])
  }
}
