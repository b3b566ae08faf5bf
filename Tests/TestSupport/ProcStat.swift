import Foundation

/// What `/proc/PID/stat` says of a process, for tests that watch real processes.
public enum ProcStat {
  /// The fields after the command name (which may hold spaces and parentheses): the state is
  /// field 0, the parent 1, user and system CPU ticks 11 and 12. `nil` when the process is gone.
  public static func fields(_ pid: Int32) -> [Substring]? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return nil }
    return text[text.index(after: close)...].split(separator: " ")
  }

  /// The state letter of `pid` (`R`, `S`, `Z`, …), or `nil` when it is gone.
  public static func state(_ pid: Int32) -> Character? {
    fields(pid)?.first?.first
  }

  /// User plus system CPU seconds of `pid` so far, or `nil` when it is gone.
  public static func cpuSeconds(_ pid: Int32) -> Double? {
    guard let fields = fields(pid), fields.count > 12, let user = Double(fields[11]),
      let system = Double(fields[12])
    else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
