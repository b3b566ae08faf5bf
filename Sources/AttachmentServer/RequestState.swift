import PosixLock

/// One request's state, kept in libmicrohttpd's per-request slot between the handler's calls.
///
/// Every field but ``pending`` is touched only on the connection's event-loop thread (a
/// connection stays on one thread of the pool), which is why it is `@unchecked Sendable`.
final class RequestState: @unchecked Sendable {
  /// When the request line arrived.
  let start = ContinuousClock.now
  /// The request target exactly as sent: path and query, before libmicrohttpd decodes `%`
  /// escapes and drops the query (what a CDN keys on).
  let target: String
  /// The listener the request came in on.
  let listener: Listener
  /// The request method (set when the headers arrive).
  var method = ""
  /// What the target asks for (parsed once, when the headers arrive).
  var route = Route.notFound
  /// The target's verified reading, when the memo of verified targets held it.
  var verified: TargetMemo.Entry?
  /// Who asked, and the request id (read once, when the headers arrive).
  var facts = RequestFacts()
  /// Where the request is: one value instead of flags that could disagree.
  var phase = Phase.requestLine
  /// The answer a task prepared while the connection was suspended.
  let pending = Locked<Reply?>(nil)

  /// The phases of one request, in order.
  enum Phase {
    /// Only its request line is in; the headers are still arriving (nothing is counted yet).
    case requestLine
    /// Its headers are in; the handler waits for the call that says the request is complete
    /// (only a refusal is answered now, with the connection closed).
    case receiving
    /// Complete and routed: answered at once, or by a task while the connection is suspended.
    case routed
    /// An answer was queued.
    case answered(Queued)
  }

  /// What was queued, for the access log and the metrics.
  struct Queued {
    /// The HTTP status.
    var status: Int
    /// The outcome word (`network`, `cache`, an error code, …).
    var outcome: String
    /// The URL the request was about, redacted.
    var url: String?
    /// The body bytes queued.
    var bytes: Int64
    /// The error code a fallback answer replaced (``FallbackAnswer``), else `nil`.
    var fallbackFor: String? = nil
    /// The size of the answer's head (``DeliveredBytes/head(status:headers:length:)``).
    var headBytes = 0
    /// The socket's progress when the answer was queued.
    var before: TCPProgress? = nil
  }

  /// What was queued, or an abandoned request's facts (status 0) when nothing was.
  var queued: Queued {
    if case .answered(let queued) = phase { return queued }
    return Queued(status: 0, outcome: "abandoned", url: nil, bytes: 0)
  }

  /// A request whose request line named `target`, on `listener`.
  init(target: String, listener: Listener) {
    self.target = target
    self.listener = listener
  }
}

/// A libmicrohttpd connection handed to the task that answers it.
struct ConnectionHandle: @unchecked Sendable {
  let pointer: OpaquePointer?
}
