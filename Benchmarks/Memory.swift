import Glibc

/// Resident memory of this process from `/proc/self/status`, and resetting its high-water
/// mark (`VmHWM`) through `/proc/self/clear_refs` so a peak covers only what came after.
enum Memory {
  /// The current resident set (`VmRSS`) in bytes, or 0 when it cannot be read.
  static var residentBytes: Int64 { field("VmRSS") }

  /// The peak resident set since start or the last reset (`VmHWM`) in bytes, or 0.
  static var peakBytes: Int64 { field("VmHWM") }

  /// Anonymous resident memory (`RssAnon`: heaps, stacks) in bytes, or 0.
  static var anonymousBytes: Int64 { field("RssAnon") }

  /// File-backed resident memory (`RssFile`: mapped libraries and files) in bytes, or 0.
  static var fileBackedBytes: Int64 { field("RssFile") }

  /// Resets `VmHWM` to the current resident set (writes `5` to `/proc/self/clear_refs`).
  /// Returns whether the kernel accepted it.
  @discardableResult
  static func resetPeak() -> Bool {
    let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var five: UInt8 = 0x35
    return write(fd, &five, 1) == 1
  }

  /// A `kB` field of `/proc/self/status`, in bytes.
  private static func field(_ name: String) -> Int64 {
    guard let bytes = Files.read("/proc/self/status", limit: 65_536) else { return 0 }
    let text = String(decoding: bytes, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
      let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
      return (Int64(String(digits)) ?? 0) * 1024
    }
    return 0
  }
}
