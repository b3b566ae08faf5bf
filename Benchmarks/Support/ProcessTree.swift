import AttachmentKit
import Glibc

/// The CPU time of a process and its descendants, read from `/proc` while they run.
enum ProcessTree {
  /// The CPU seconds (user + system) `root` and every live descendant of it used so far, each
  /// with the children it has reaped (`/proc/PID/stat` fields 14–17); 0 for a process gone.
  /// What a later `wait4` of `root` reports includes all of it, so the difference is the CPU
  /// spent in between.
  static func cpuSeconds(_ root: pid_t) -> Double {
    var parents: [pid_t: pid_t] = [:]
    var times: [pid_t: Double] = [:]
    guard let directory = opendir("/proc") else { return 0 }
    defer { closedir(directory) }
    while let entry = readdir(directory) {
      guard let pid = pid_t(DirectoryEntry.name(entry)), let stat = Self.stat(pid) else { continue }
      parents[pid] = stat.parent
      times[pid] = stat.seconds
    }
    var total = 0.0
    for (pid, seconds) in times where Self.descends(pid, from: root, parents: parents) { total += seconds }
    return total
  }

  /// Whether `pid` is `root` or below it.
  private static func descends(_ pid: pid_t, from root: pid_t, parents: [pid_t: pid_t]) -> Bool {
    var current = pid
    for _ in 0..<64 {
      if current == root { return true }
      guard let parent = parents[current], parent > 1 else { return false }
      current = parent
    }
    return false
  }

  /// A process's parent and its CPU seconds with its reaped children's.
  private static func stat(_ pid: pid_t) -> (parent: pid_t, seconds: Double)? {
    guard let bytes = Files.read("/proc/\(pid)/stat", limit: 4096) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    // After the command: state (field 3) is first, so ppid (4) is at 1, utime..cstime (14–17) at 11–14.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 14, let parent = pid_t(fields[1]) else { return nil }
    let ticks = (11...14).compactMap { Double(fields[$0]) }.reduce(0, +)
    return (parent, ticks / Double(sysconf(Int32(_SC_CLK_TCK))))
  }
}
