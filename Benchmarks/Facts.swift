import Glibc

/// The facts a result needs beside its numbers: when, where, with what.
enum Facts {
  /// Date, mode, server, versions, machine, and the file system the caches live on.
  static func collect(
    options: Options, server: any MediaServer, scratch: String, documentRoot: String
  ) -> [(key: String, value: String)] {
    let curl = CurlCLI.versionLine ?? "unknown"
    let libcurl =
      curl.split(separator: " ").first { $0.hasPrefix("libcurl/") }.map { String($0.dropFirst(8)) }
      ?? "unknown"
    let curlVersion = curl.split(separator: " ").dropFirst().first.map(String.init) ?? "unknown"
    let swift = Subprocess.firstLine(of: ["swift", "--version"]) ?? "unknown"
    return [
      ("date", utcNow()),
      ("mode", options.quick ? "quick" : "full"),
      ("server", server.name),
      ("swift_version", swift),
      ("libcurl_version", libcurl),
      ("curl_version", curlVersion),
      ("kernel", kernel()),
      ("cpu", cpuModel()),
      ("cores", String(sysconf(Int32(_SC_NPROCESSORS_ONLN)))),
      ("cache_dir", scratch + " (" + fileSystem(of: scratch) + ")"),
      ("cache_fs_create_p50_us", createCost(in: scratch)),
      ("server_root", documentRoot + " (" + fileSystem(of: documentRoot) + ")"),
      ("load_average_at_start", loadAverage()),
    ]
  }

  /// The 1, 5 and 15 minute load averages (`/proc/loadavg`): other work on a shared machine
  /// shows here, and in the spread of the percentiles.
  static func loadAverage() -> String {
    guard let bytes = Files.read("/proc/loadavg", limit: 4096) else { return "unknown" }
    return String(decoding: bytes, as: UTF8.self).split(separator: " ").prefix(3).joined(separator: " ")
  }

  /// The type and device of the file system holding `path`: the longest mount point in
  /// `/proc/mounts` that contains it, e.g. `ext4 on /dev/vda`.
  static func fileSystem(of path: String) -> String {
    guard let bytes = Files.read("/proc/mounts", limit: 1 << 20) else { return "unknown" }
    var best: (mount: String, text: String)?
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count >= 3 else { continue }
      let mount = String(fields[1])
      let contains = mount == "/" || path == mount || path.hasPrefix(mount + "/")
      if contains, mount.count >= (best?.mount.count ?? -1) {
        best = (mount, "\(fields[2]) on \(fields[0])")
      }
    }
    return best?.text ?? "unknown"
  }

  /// The median time to create, write (300 bytes), close and remove a file in `directory`,
  /// over 200 files, in microseconds: what one metadata write costs on this file system.
  static func createCost(in directory: String) -> String {
    let payload = [UInt8](repeating: 0x61, count: 300)
    var samples: [Duration] = []
    for index in 0..<200 {
      let path = "\(directory)/create-probe-\(index)"
      let start = ContinuousClock.now
      guard (try? Files.write(payload, to: path)) != nil else { return "unknown" }
      samples.append(ContinuousClock.now - start)
    }
    for index in 0..<200 { unlink("\(directory)/create-probe-\(index)") }
    return String(Int(Distribution(samples).percentile(50) * 1e6))
  }

  /// The current time as `YYYY-MM-DDTHH:MM:SSZ`.
  static func utcNow() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
  }

  /// `uname -sr`.
  static func kernel() -> String {
    var names = utsname()
    guard uname(&names) == 0 else { return "unknown" }
    func text<T>(_ field: T) -> String {
      withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
    return text(names.sysname) + " " + text(names.release)
  }

  /// The first `model name` of `/proc/cpuinfo`.
  static func cpuModel() -> String {
    guard let bytes = Files.read("/proc/cpuinfo", limit: 1 << 16) else { return "unknown" }
    let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first {
      $0.hasPrefix("model name")
    }
    guard let line, let colon = line.firstIndex(of: ":") else { return "unknown" }
    return line[line.index(after: colon)...].trimmingPrefix(" ").description
  }
}
