import PosixLock

/// The server's counters, written as Prometheus text on `GET /metrics`.
///
/// `attachkit_requests_total{route,outcome,code}` counts answers (outcome: the attachment's
/// source, an error code, `not_modified` or `ok`; code: the HTTP status);
/// `attachkit_request_duration_seconds{route}` is a histogram from a request's first byte to
/// its answer's last, per route (so scrapes and health checks do not set the attachments'
/// p99); `attachkit_response_bytes_total` counts body bytes of answers sent to the end; the
/// upstream counters and `attachkit_upstream_duration_seconds` count fetches this server's
/// requests made, once per fetch however many requests shared it;
/// `attachkit_fallbacks_total{code}` counts fallback images answered, by the error code each
/// replaced (``FallbackAnswer``). The gauges of the cache and
/// the process are in ``ProcessMetrics`` and ``CacheGauges``.
final class Metrics: Sendable {
  private struct RequestKey: Hashable {
    var route: String
    var outcome: String
    var code: Int
  }

  private struct State {
    var requests: [RequestKey: Int] = [:]
    var cacheHits = 0
    var upstreamRequests = 0
    var upstreamBytes: Int64 = 0
    var responseBytes: Int64 = 0
    var inflight = 0
    var connections = 0
    var cuts: [String: Int] = [:]
    var fallbacks: [String: Int] = [:]
    var durations: [String: Histogram] = [:]
    var upstreamDurations = Histogram()
  }

  /// The histograms' upper bounds, in seconds.
  static let bounds: [Double] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
  ]

  private let state = Locked(State())

  /// A request started.
  func begin() { state.withLock { $0.inflight += 1 } }

  /// A request was answered (or abandoned) after `seconds`, having sent `bytes` of body; with
  /// the fallback image in place of the error `fallbackFor` when that is set.
  func end(
    route: String, outcome: String, code: Int, seconds: Double, bytes: Int64 = 0, fallbackFor: String? = nil
  ) {
    state.withLock { state in
      if let replaced = fallbackFor { state.fallbacks[replaced, default: 0] += 1 }
      state.inflight -= 1
      state.requests[RequestKey(route: route, outcome: outcome, code: code), default: 0] += 1
      if outcome == "cache" { state.cacheHits += 1 }
      state.durations[route, default: Histogram()].observe(seconds)
      state.responseBytes += bytes
    }
  }

  /// An upstream fetch (or revalidation) finished after `seconds`, having received `bytes` of body.
  func upstream(bytes: Int64, seconds: Double) {
    state.withLock { state in
      state.upstreamRequests += 1
      state.upstreamBytes += bytes
      state.upstreamDurations.observe(seconds)
    }
  }

  /// A connection opened (`+1`) or closed (`-1`); returns the count now open.
  @discardableResult
  func connection(_ change: Int) -> Int {
    state.withLock { state in
      state.connections += change
      return state.connections
    }
  }

  /// The connection watch cut a connection, for `reason` (``ConnectionRules/Cut``).
  func cut(_ reason: String) { state.withLock { $0.cuts[reason, default: 0] += 1 } }

  /// Requests started and not yet answered.
  var inflight: Int { state.withLock { $0.inflight } }

  /// The Prometheus text exposition (version 0.0.4) of the request and upstream metrics.
  var text: String {
    let state = state.withLock { $0 }
    var out = "# HELP attachkit_requests_total Requests answered, by route, outcome and HTTP status.\n"
    out += "# TYPE attachkit_requests_total counter\n"
    for (key, count) in state.requests.sorted(by: {
      ($0.key.route, $0.key.outcome, $0.key.code) < ($1.key.route, $1.key.outcome, $1.key.code)
    }) {
      out +=
        "attachkit_requests_total{route=\"\(key.route)\",outcome=\"\(key.outcome)\",code=\"\(key.code)\"} \(count)\n"
    }
    out += Self.counter(
      "attachkit_cache_hits_total", "Files answered from the cache without contacting the origin.",
      state.cacheHits)
    out += Self.counter(
      "attachkit_upstream_requests_total", "Fetches and revalidations sent to origins.",
      state.upstreamRequests)
    out += Self.counter(
      "attachkit_upstream_bytes_total", "Body bytes received from origins.", state.upstreamBytes)
    out += Self.counter(
      "attachkit_response_bytes_total", "Body bytes of answers sent to their end.", state.responseBytes)
    out += Self.gauge("attachkit_inflight_requests", "Requests started and not yet answered.", state.inflight)
    out += Self.gauge("attachkit_open_connections", "Client connections open.", state.connections)
    out += "# HELP attachkit_connections_cut_total Connections closed by the server's timeouts, by reason.\n"
    out += "# TYPE attachkit_connections_cut_total counter\n"
    for (reason, count) in state.cuts.sorted(by: { $0.key < $1.key }) {
      out += "attachkit_connections_cut_total{reason=\"\(reason)\"} \(count)\n"
    }
    out += "# HELP attachkit_fallbacks_total Fallback images answered, by the error code they replaced.\n"
    out += "# TYPE attachkit_fallbacks_total counter\n"
    for (code, count) in state.fallbacks.sorted(by: { $0.key < $1.key }) {
      out += "attachkit_fallbacks_total{code=\"\(code)\"} \(count)\n"
    }
    out += "# HELP attachkit_request_duration_seconds Time from a request's arrival to its answer's end.\n"
    out += "# TYPE attachkit_request_duration_seconds histogram\n"
    for (route, histogram) in state.durations.sorted(by: { $0.key < $1.key }) {
      out += histogram.lines("attachkit_request_duration_seconds", labels: "route=\"\(route)\",")
    }
    out += "# HELP attachkit_upstream_duration_seconds Time of a fetch or revalidation from its origin.\n"
    out += "# TYPE attachkit_upstream_duration_seconds histogram\n"
    out += state.upstreamDurations.lines("attachkit_upstream_duration_seconds", labels: "")
    return out
  }

  /// A counter's three lines.
  static func counter(_ name: String, _ help: String, _ value: some Numeric) -> String {
    "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
  }

  /// A gauge's three lines.
  static func gauge(_ name: String, _ help: String, _ value: some Numeric) -> String {
    "# HELP \(name) \(help)\n# TYPE \(name) gauge\n\(name) \(value)\n"
  }
}

/// A histogram's cumulative buckets over ``Metrics/bounds``, count and sum.
struct Histogram: Sendable {
  var buckets = [Int](repeating: 0, count: Metrics.bounds.count)
  var count = 0
  var sum = 0.0

  mutating func observe(_ seconds: Double) {
    if let index = Metrics.bounds.firstIndex(where: { seconds <= $0 }) { buckets[index] += 1 }
    count += 1
    sum += seconds
  }

  /// The `_bucket`, `_sum` and `_count` lines of `name`, each with `labels` (empty, or ending
  /// in a comma) before `le`.
  func lines(_ name: String, labels: String) -> String {
    var out = ""
    var cumulative = 0
    for (bound, count) in zip(Metrics.bounds, buckets) {
      cumulative += count
      out += "\(name)_bucket{\(labels)le=\"\(bound)\"} \(cumulative)\n"
    }
    out += "\(name)_bucket{\(labels)le=\"+Inf\"} \(count)\n"
    let plain = labels.isEmpty ? "" : "{\(labels.dropLast())}"
    out += "\(name)_sum\(plain) \(sum)\n"
    out += "\(name)_count\(plain) \(count)\n"
    return out
  }
}
