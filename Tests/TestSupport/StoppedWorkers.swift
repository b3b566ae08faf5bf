import Foundation

/// Rescue workers found in `/proc` and stopped with `SIGSTOP` once they are seen working, so that
/// a test of what happens when a rescue cannot finish in time makes it unable to finish, on a
/// machine of any speed, instead of choosing a source this machine takes seconds to convert.
///
/// A worker is seen working by what it holds: the job's output, a regular file it has open
/// write-only (a worker waiting for a job holds none), under the directory the test owns; for a
/// media rescue, once that file has bytes, its writer has begun (the transcode was admitted).
public enum StoppedWorkers {
  /// The live rescue workers whose parent is `parent` and that load `library` (`"ffmpeg"`,
  /// `"libvips"`), from their command lines.
  public static func workers(of parent: Int32, library: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { child in
      guard let fields = ProcStat.fields(child), fields.count > 1, fields[0] != "Z",
        Int32(fields[1]) == parent,
        let command = FileManager.default.contents(atPath: "/proc/\(child)/cmdline")
      else { return false }
      return String(decoding: command, as: UTF8.self).contains("--preload\0\(library)")
    }
  }

  /// The size of the job output `worker` holds under `directory` (a regular file open
  /// write-only), or `nil` when it holds none.
  public static func outputBytes(of worker: Int32, under directory: String) -> Int64? {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/fd")) ?? []
    for descriptor in descriptors {
      let link = "/proc/\(worker)/fd/\(descriptor)"
      guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
        target.hasPrefix(directory), isWriteOnly("/proc/\(worker)/fdinfo/\(descriptor)")
      else { continue }
      var status = stat()
      guard stat(link, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
      return Int64(status.st_size)
    }
    return nil
  }

  /// Watches the workers of `parent` loading `library`, every 2 ms on a thread of its own (a
  /// stalled cooperative pool does not hold the watch back), and stops with `SIGSTOP` the first
  /// one whose job output under `directory` holds at least `bytes` bytes. Returns its process
  /// ID, or `nil` when none was seen within `within` (a hang bound, not a measure).
  public static func stopWorking(
    below parent: Int32, library: String, outputUnder directory: String, atLeast bytes: Int64 = 0,
    within: Duration = .seconds(30)
  ) async -> Int32? {
    await onOwnThread { () -> Int32? in
      let end = ContinuousClock.now + within
      while ContinuousClock.now < end {
        for worker in workers(of: parent, library: library) {
          guard let held = outputBytes(of: worker, under: directory), held >= bytes else { continue }
          kill(worker, SIGSTOP)
          return worker
        }
        usleep(2_000)
      }
      return nil
    }
  }

  /// Whether `pid` is a live process (a zombie, killed and not yet reaped, is not).
  public static func isAlive(_ pid: Int32) -> Bool {
    guard let state = ProcStat.state(pid) else { return false }
    return state != "Z" && state != "X"
  }

  /// Whether `pid` is gone (or a zombie) within `within`, watched every 5 ms.
  public static func isGone(_ pid: Int32, within: Duration = eventWait) async -> Bool {
    let end = ContinuousClock.now + within
    while ContinuousClock.now < end {
      if !isAlive(pid) { return true }
      try? await Task.sleep(for: .milliseconds(5))
    }
    return !isAlive(pid)
  }

  /// Whether the descriptor that `/proc/PID/fdinfo/N` describes is open write-only.
  private static func isWriteOnly(_ fdinfo: String) -> Bool {
    guard let text = try? String(contentsOfFile: fdinfo, encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
      let flags = Int32(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
    else { return false }
    return flags & O_ACCMODE == O_WRONLY
  }
}
