import Foundation

/// When this process started, as a `ContinuousClock` instant, so the budget counts from the
/// launch (as iOS counts an extension's 30 s) rather than from `main`, which dynamic loading
/// delays by milliseconds, more on a busy machine.
public enum ProcessStart {
  /// The start of this process (to the kernel's clock tick, 10 ms), or `now` when
  /// `/proc/self/stat` cannot be read or says something implausible (more than 1 s ago).
  public static func instant(now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
    guard let age = age() else { return now }
    return now - age
  }

  /// How long ago the process started: the boot-time clock now, less the start time that
  /// `/proc/self/stat` gives in clock ticks since boot.
  static func age() -> Duration? {
    guard let data = FileManager.default.contents(atPath: "/proc/self/stat"),
      let text = String(data: data, encoding: .utf8),
      let startTicks = startTime(fromStat: text)
    else { return nil }
    let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
    var boot = timespec()
    guard ticksPerSecond > 0, clock_gettime(CLOCK_BOOTTIME, &boot) == 0 else { return nil }
    let nowNanoseconds = Int64(boot.tv_sec) * 1_000_000_000 + Int64(boot.tv_nsec)
    let startNanoseconds = startTicks * (1_000_000_000 / Int64(ticksPerSecond))
    let age = Duration.nanoseconds(nowNanoseconds - startNanoseconds)
    return age >= .zero && age < .seconds(1) ? age : nil
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
