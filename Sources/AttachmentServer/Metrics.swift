import PosixLock

/// The server's counters, written as Prometheus text on `GET /metrics`.
///
/// `attachkit_requests_total{route,outcome,code}` counts answers (outcome: the attachment's
/// source, an error code, `not_modified` or `ok`; code: the HTTP status);
/// `attachkit_request_duration_seconds` is a histogram from a request's first byte to its
/// answer's last; the upstream counters count fetches this server's requests made, once per
/// fetch however many requests shared it.
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
    var inflight = 0
    var connections = 0
    var cuts: [String: Int] = [:]
    var buckets = [Int](repeating: 0, count: Metrics.bounds.count)
    var durationCount = 0
    var durationSum = 0.0
  }

  /// The histogram's upper bounds, in seconds.
  static let bounds: [Double] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
  ]

  private let state = Locked(State())

  /// A request started.
  func begin() { state.withLock { $0.inflight += 1 } }

  /// A request was answered (or abandoned) after `seconds`.
  func end(route: String, outcome: String, code: Int, seconds: Double) {
    state.withLock { state in
      state.inflight -= 1
      state.requests[RequestKey(route: route, outcome: outcome, code: code), default: 0] += 1
      if outcome == "cache" { state.cacheHits += 1 }
      if let index = Self.bounds.firstIndex(where: { seconds <= $0 }) { state.buckets[index] += 1 }
      state.durationCount += 1
      state.durationSum += seconds
    }
  }

  /// An upstream fetch (or revalidation) finished, having received `bytes` of body.
  func upstream(bytes: Int64) {
    state.withLock { state in
      state.upstreamRequests += 1
      state.upstreamBytes += bytes
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

  /// The Prometheus text exposition (version 0.0.4).
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
    out += "# HELP attachkit_cache_hits_total Files answered from the cache without contacting the origin.\n"
    out += "# TYPE attachkit_cache_hits_total counter\nattachkit_cache_hits_total \(state.cacheHits)\n"
    out += "# HELP attachkit_upstream_requests_total Fetches and revalidations sent to origins.\n"
    out +=
      "# TYPE attachkit_upstream_requests_total counter\nattachkit_upstream_requests_total \(state.upstreamRequests)\n"
    out += "# HELP attachkit_upstream_bytes_total Body bytes received from origins.\n"
    out +=
      "# TYPE attachkit_upstream_bytes_total counter\nattachkit_upstream_bytes_total \(state.upstreamBytes)\n"
    out += "# HELP attachkit_inflight_requests Requests started and not yet answered.\n"
    out += "# TYPE attachkit_inflight_requests gauge\nattachkit_inflight_requests \(state.inflight)\n"
    out += "# HELP attachkit_open_connections Client connections open.\n"
    out += "# TYPE attachkit_open_connections gauge\nattachkit_open_connections \(state.connections)\n"
    out += "# HELP attachkit_connections_cut_total Connections closed by the server's timeouts, by reason.\n"
    out += "# TYPE attachkit_connections_cut_total counter\n"
    for (reason, count) in state.cuts.sorted(by: { $0.key < $1.key }) {
      out += "attachkit_connections_cut_total{reason=\"\(reason)\"} \(count)\n"
    }
    out += "# HELP attachkit_request_duration_seconds Time from a request's arrival to its answer's end.\n"
    out += "# TYPE attachkit_request_duration_seconds histogram\n"
    var cumulative = 0
    for (bound, count) in zip(Self.bounds, state.buckets) {
      cumulative += count
      out += "attachkit_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
    }
    out += "attachkit_request_duration_seconds_bucket{le=\"+Inf\"} \(state.durationCount)\n"
    out += "attachkit_request_duration_seconds_sum \(state.durationSum)\n"
    out += "attachkit_request_duration_seconds_count \(state.durationCount)\n"
    return out
  }
}
