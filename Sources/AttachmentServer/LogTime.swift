import Glibc

/// The time stamp of serve's log lines: the `time` field of every access-log line and every
/// event line (`listening`, `keys_reloaded`, `draining`, …), so that both can be ordered and
/// measured against each other and against the clocks of the tools that read them.
package enum LogTime {
  /// The current wall-clock time as RFC 3339 in UTC with milliseconds
  /// (`2026-12-02T05:08:35.123Z`). Never fails: the realtime clock is always readable.
  package static func now() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return AccessLog.rfc3339(now)
  }
}
