import AttachmentKit
import Glibc
import PosixLock

/// The standard `process_*` metrics (as Prometheus' client libraries name them), read from
/// `/proc/self` and `getrusage` at each scrape, and `attachkit_build_info`.
enum ProcessMetrics {
  /// When this process started, in seconds since 1970 (`/proc/self/stat`'s start time after
  /// `/proc/stat`'s boot time), read once.
  static let startTime: Double = {
    guard let stat = readSmallFile("/proc/self/stat"), let close = stat.lastIndex(of: ")"),
      let boot = readSmallFile("/proc/stat")?.split(separator: "\n").first(where: { $0.hasPrefix("btime ") })
        .flatMap({ Double($0.dropFirst(6)) })
    else { return HitMemo.now() }
    // Fields after the command name: state is field 3, start time field 22.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 19, let ticks = Double(fields[19]) else { return HitMemo.now() }
    return boot + ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
  }()

  /// The exposition lines, with `version` in the build info.
  static func text(version: String) -> String {
    var out = ""
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu =
      Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
      + Double(usage.ru_stime.tv_usec) / 1e6
    out += Metrics.counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", cpu)
    let pages = readSmallFile("/proc/self/statm")?.split(separator: " ").compactMap { Double($0) } ?? []
    let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
    if pages.count >= 2 {
      out += Metrics.gauge(
        "process_virtual_memory_bytes", "Virtual memory size, in bytes.", pages[0] * pageSize)
      out += Metrics.gauge(
        "process_resident_memory_bytes", "Resident memory size, in bytes.", pages[1] * pageSize)
    }
    out += Metrics.gauge("process_open_fds", "Open file descriptors.", openDescriptors())
    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
      out += Metrics.gauge("process_max_fds", "The limit of open file descriptors.", Double(limit.rlim_cur))
    }
    out += Metrics.gauge(
      "process_start_time_seconds", "Start time of the process since 1970, in seconds.", startTime)
    out += "# HELP attachkit_build_info The running build: its version, always 1.\n"
    out += "# TYPE attachkit_build_info gauge\n"
    out += "attachkit_build_info{version=\"\(version)\"} 1\n"
    return out
  }

  /// `attachkit_sandbox_layer{layer="…"}`, 1 for each rescue sandbox layer in force and 0 for
  /// each missing one; nothing without rescue (no layers).
  /// `attachkit_worker_jobs_total{job}`: the jobs this process gave its rescue workers, by
  /// kind (every kind, 0 for none).
  static func workerJobsText() -> String {
    var out = "# HELP attachkit_worker_jobs_total Jobs given to rescue workers, by kind.\n"
    out += "# TYPE attachkit_worker_jobs_total counter\n"
    let jobs = RescueWorkers.jobsRun()
    for kind in RescueWorkers.JobKind.allCases {
      out += "attachkit_worker_jobs_total{job=\"\(kind.rawValue)\"} \(jobs[kind] ?? 0)\n"
    }
    return out
  }

  static func sandboxText(_ layers: [SandboxReport.Layer]) -> String {
    guard !layers.isEmpty else { return "" }
    var out = "# HELP attachkit_sandbox_layer Each rescue worker sandbox layer: 1 in force, 0 missing.\n"
    out += "# TYPE attachkit_sandbox_layer gauge\n"
    for layer in layers {
      out += "attachkit_sandbox_layer{layer=\"\(layer.layer.rawValue)\"} \(layer.inForce ? 1 : 0)\n"
    }
    return out
  }

  /// The entries of `/proc/self/fd`, less the one reading it.
  private static func openDescriptors() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return 0 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
      if DirectoryEntry.name(entry).first != "." { count += 1 }
    }
    return max(0, count - 1)
  }

  /// A small file's text (`/proc` files report size 0: read until the end), or `nil`.
  static func readSmallFile(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { _ = close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 65_536 {
      let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { break }
      bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

/// The cache's size and entry count for `/metrics`: a scan of the cache, so taken at most every
/// ``lifetime`` seconds however often it is scraped; and the lookups made (a counter).
final class CacheGauges: Sendable {
  /// How long one scan answers scrapes, in seconds.
  static let lifetime = 10.0

  private let last = Locked<(at: Double, report: CacheReport)?>(nil)

  /// The gauges' lines for `cache`.
  func text(_ cache: AttachmentCache) -> String {
    let now = HitMemo.now()
    let report = last.withLock { last -> CacheReport? in
      guard let last, now - last.at < Self.lifetime else { return nil }
      return last.report
    }
    let current = report ?? (try? cache.stats()) ?? CacheReport()
    if report == nil { last.withLock { $0 = (now, current) } }
    return Metrics.gauge("attachkit_cache_bytes", "Bytes of distinct content in the cache.", current.bytes)
      + Metrics.gauge("attachkit_cache_entries", "Entries (records) in the cache.", current.entries)
      + Metrics.counter(
        "attachkit_cache_lookups_total", "Cache lookups (record reads) by this process.", cache.lookupCount)
  }
}
