import PosixLock

/// One request's state, kept in libmicrohttpd's per-request slot between the handler's calls.
///
/// Every field but ``pending`` is touched only on the connection's event-loop thread (a
/// connection stays on one thread of the pool), which is why it is `@unchecked Sendable`.
final class RequestState: @unchecked Sendable {
  /// When the request's headers arrived.
  let start = ContinuousClock.now
  /// The request method.
  let method: String
  /// What the path asks for (parsed once, when the headers arrive).
  let route: Route
  /// Whether the complete request has been routed.
  var started = false
  /// What was queued: status, outcome, redacted URL, body bytes.
  var status = 0
  var outcome = "abandoned"
  var url: String?
  var bytes: Int64 = 0
  /// Whether an answer has been queued.
  var answered = false
  /// The answer a task prepared while the connection was suspended.
  let pending = Locked<Reply?>(nil)

  init(method: String, route: Route) {
    self.method = method
    self.route = route
  }
}

/// A libmicrohttpd connection handed to the task that answers it.
struct ConnectionHandle: @unchecked Sendable {
  let pointer: OpaquePointer?
}
