/// The server's connection timeouts as a value: given what one connection has done (its
/// ``TCPProgress`` over time) and where it is, whether to keep it or cut it, and why.
///
/// - While a request head is awaited, it must be complete within ``headTimeout`` of its first
///   byte, and arrive at ``minimumBytesPerSecond`` or faster once a second has passed since that
///   byte (slowloris: one byte a second held a connection for as long as it liked).
/// - In every phase but waiting for the pipeline, a connection on which nothing moves (no byte
///   received, none of ours acknowledged) for ``idleTimeout`` is cut. A client that keeps reading
///   a large answer slowly keeps acknowledging, so it is never idle.
struct ConnectionRules: Sendable {
  /// A connection with no progress this long is cut, in seconds.
  var idleTimeout: Double
  /// A request head must be complete this long after its first byte, in seconds.
  var headTimeout: Double
  /// The slowest a request head may arrive, in bytes per second, from one second after its
  /// first byte.
  var minimumBytesPerSecond: Double

  /// Where a connection is.
  enum Phase: Equatable, Sendable {
    /// Waiting for a request head (a new connection, or one kept alive after an answer).
    case awaitingHead
    /// The head is in; the request is being answered (a pipeline call may be under way,
    /// bounded by its deadline). No timeout applies.
    case working
    /// An answer is being sent.
    case sending
  }

  /// What one connection has done, as the watch last saw it.
  struct Track: Equatable, Sendable {
    /// The phase.
    var phase = Phase.awaitingHead
    /// When the phase began, in seconds on the watch's clock.
    var since: Double
    /// Bytes received when the phase began.
    var receivedAtStart: UInt64 = 0
    /// When the current head's first byte arrived, once seen.
    var firstByte: Double?
    /// The progress last seen, and when it last changed.
    var last = TCPProgress(received: 0, acknowledged: 0, millisecondsSinceData: 0)
    var lastChange: Double

    /// A track that starts at `now`.
    init(now: Double) {
      since = now
      lastChange = now
    }

    /// Begins `phase` at `now`, with the connection's `progress` then.
    mutating func begin(_ phase: Phase, now: Double, progress: TCPProgress?) {
      self.phase = phase
      since = now
      firstByte = nil
      lastChange = now
      if let progress {
        receivedAtStart = progress.received
        last = progress
      }
    }
  }

  /// Why a connection is cut.
  enum Cut: String, Equatable, Sendable {
    /// Nothing moved for the idle timeout.
    case idle
    /// The head took longer than its deadline.
    case headDeadline = "head_deadline"
    /// The head arrived slower than the minimum rate.
    case tooSlow = "too_slow"
  }

  /// Updates `track` with `progress` seen at `now` and returns why to cut the connection, or
  /// `nil` to keep it.
  func judge(_ track: inout Track, progress: TCPProgress, now: Double) -> Cut? {
    if progress.received != track.last.received || progress.acknowledged != track.last.acknowledged {
      track.lastChange = now
    }
    track.last = progress
    if track.phase == .working { return nil }
    if now - track.lastChange > idleTimeout { return .idle }
    guard track.phase == .awaitingHead, progress.received > track.receivedAtStart else { return nil }
    // The first byte arrived no earlier than the phase and no later than the last data.
    let first = track.firstByte ?? max(track.since, now - Double(progress.millisecondsSinceData) / 1000)
    track.firstByte = first
    let elapsed = now - first
    if elapsed > headTimeout { return .headDeadline }
    let bytes = Double(progress.received - track.receivedAtStart)
    if elapsed >= 1, bytes / elapsed < minimumBytesPerSecond { return .tooSlow }
    return nil
  }
}
