import AttachmentKit
import Glibc

/// One JSON line per answered request on standard error, written with one `write` so lines
/// from concurrent requests never interleave. Signatures and URL credentials are never logged
/// (``LoggedPath``), and every header value is capped and escaped (``RequestFacts``), so each
/// line is one valid JSON object that goaccess reads with docs/deploy.md's `--log-format`.
enum AccessLog {
  /// What one line says besides the time.
  struct Line {
    /// Who asked, and the request id.
    var facts: RequestFacts
    /// The request method.
    var method: String
    /// The route's label (`attachment`, `info`, `healthz`, …).
    var route: String
    /// The request path, redacted (``LoggedPath``).
    var path: String
    /// The origin URL, redacted, when the request named one.
    var url: String?
    /// The HTTP status (0: nothing was answered).
    var status: Int
    /// The outcome word (`network`, `cache`, an error code, …).
    var outcome: String
    /// The body bytes the client really received (``DeliveredBytes``).
    var bytes: Int64
    /// From the request line's arrival to the end of the answer, in seconds.
    var seconds: Double
    /// Whether libmicrohttpd wrote the whole answer.
    var completed: Bool
    /// The error code a fallback answer replaced (``FallbackAnswer``), else `nil`.
    var fallbackFor: String? = nil
  }

  /// Writes the line for one request, stamped with the current time.
  static func write(_ line: Line) {
    var text = self.text(line, time: LogTime.now())
    text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
  }

  /// The line's text, newline included: a JSON object, its fields in a fixed order, written
  /// straight into one string (no value tree: the line is written for every request).
  static func text(_ line: Line, time: String) -> String {
    var out = ""
    out.reserveCapacity(384)
    func field(_ key: StaticString, _ value: String, first: Bool = false) {
      out += first ? "{\"" : ",\""
      out += key.description
      out += "\":"
      JSON.appendQuoted(value, to: &out)
    }
    func number(_ key: StaticString, _ value: String) {
      out += ",\""
      out += key.description
      out += "\":"
      out += value
    }
    field("time", time, first: true)
    field("requestId", line.facts.requestId)
    field("client", line.facts.client)
    field("peer", line.facts.peer)
    if let forwarded = line.facts.forwardedFor { field("forwardedFor", forwarded) }
    field("method", line.method)
    field("route", line.route)
    field("path", line.path)
    if let url = line.url { field("url", LoggedPath.redact(url)) }
    number("status", String(line.status))
    field("outcome", line.outcome)
    if let replaced = line.fallbackFor { field("fallbackFor", replaced) }
    number("bytes", String(line.bytes))
    let milliseconds = (line.seconds * 1_000_000).rounded() / 1000
    number("ms", milliseconds.isFinite ? String(milliseconds) : "null")
    number("completed", line.completed ? "true" : "false")
    if let agent = line.facts.userAgent { field("userAgent", agent) }
    if let range = line.facts.range { field("range", range) }
    out += "}\n"
    return out
  }

  /// `instant` as RFC 3339 in UTC with milliseconds: `2026-12-02T05:08:35.123Z`.
  static func rfc3339(_ instant: timespec) -> String {
    var seconds = instant.tv_sec
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let milliseconds = Int(instant.tv_nsec / 1_000_000)
    let fraction = String(repeating: "0", count: 3 - String(milliseconds).count) + String(milliseconds)
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
  }
}
