import AttachmentKit
import Glibc

/// One JSON line per answered request on standard error, written with one `write` so lines
/// from concurrent requests never interleave. Signatures and URL credentials are never logged:
/// the line holds the route and the redacted URL, not the path.
enum AccessLog {
  /// Writes the line for one request. `url` must be redacted already (every ``Reply`` holds
  /// its URL redacted).
  static func write(
    method: String, route: String, url: String?, status: Int, outcome: String, bytes: Int64, seconds: Double,
    completed: Bool
  ) {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var fields: [(key: String, value: JSON)] = [
      ("time", .double(((Double(now.tv_sec) + Double(now.tv_nsec) / 1e9) * 1000).rounded() / 1000)),
      ("method", .string(method)), ("route", .string(route)),
    ]
    if let url { fields.append(("url", .string(url))) }
    fields += [
      ("status", .int(Int64(status))), ("outcome", .string(outcome)), ("bytes", .int(bytes)),
      ("ms", .double((seconds * 1_000_000).rounded() / 1000)), ("completed", .bool(completed)),
    ]
    let line = JSON.object(fields).text + "\n"
    var bytes = Array(line.utf8)
    _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
  }
}
