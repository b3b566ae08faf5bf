import Glibc
import PosixLock

/// The server's own connection timeouts (``ConnectionRules``), enforced by one thread that
/// looks at every open connection's ``TCPProgress`` five times a second.
///
/// libmicrohttpd's inactivity timeout is off (it counted only its own reads and writes). A
/// connection cut while its head is awaited gets `408` and is shut down; one cut mid-answer is
/// shut down. Shutting a socket down (never closing it) lets libmicrohttpd's event loop see the
/// end and close the connection on its own thread. A connection is in the registry from
/// libmicrohttpd's "started" notice to its "closed" notice, which comes before it closes the
/// descriptor, and both take the registry's lock, so the watch never touches a descriptor that
/// could have been reused.
final class ConnectionWatch: Sendable {
  private struct Entry {
    var descriptor: Int32
    var track: ConnectionRules.Track
    var cut = false
  }

  private struct State {
    var entries: [UInt: Entry] = [:]
    var stopped = false
  }

  /// How often the watch looks, in microseconds.
  static let period: UInt32 = 200_000

  private let rules: ConnectionRules
  private let state = Locked(State())
  private let onCut: @Sendable (ConnectionRules.Cut) -> Void

  /// A watch applying `rules`; `onCut` is told of every cut (the metrics count them).
  init(rules: ConnectionRules, onCut: @escaping @Sendable (ConnectionRules.Cut) -> Void) {
    self.rules = rules
    self.onCut = onCut
  }

  /// Starts the watch's thread. `false` when it cannot be started.
  func start() -> Bool {
    var thread = pthread_t()
    let context = Unmanaged.passRetained(self).toOpaque()
    let started = pthread_create(
      &thread, nil,
      { context in
        guard let context else { return nil }
        Unmanaged<ConnectionWatch>.fromOpaque(context).takeRetainedValue().run()
        return nil
      }, context)
    guard started == 0 else {
      Unmanaged<ConnectionWatch>.fromOpaque(context).release()
      return false
    }
    pthread_detach(thread)
    return true
  }

  /// Stops the thread (at its next look).
  func stop() { state.withLock { $0.stopped = true } }

  private func run() {
    while true {
      usleep(Self.period)
      let now = Self.now()
      var cuts: [ConnectionRules.Cut] = []
      let stopped = state.withLock { state -> Bool in
        guard !state.stopped else { return true }
        for (key, entry) in state.entries where !entry.cut {
          guard let progress = TCPProgress.of(entry.descriptor) else { continue }
          var track = entry.track
          let cut = rules.judge(&track, progress: progress, now: now)
          state.entries[key]?.track = track
          guard let cut else { continue }
          state.entries[key]?.cut = true
          Self.cut(entry.descriptor, phase: track.phase, reason: cut)
          cuts.append(cut)
        }
        return false
      }
      for cut in cuts { onCut(cut) }
      if stopped { return }
    }
  }

  /// Shuts the socket down. A client whose head is late is told so first (`408`); an answer cut
  /// mid-way is aborted (`SO_LINGER` 0: libmicrohttpd's close then resets the connection and
  /// drops what the kernel still queued), so that what the client acknowledged until then is
  /// what it got, as the access log counts it.
  private static func cut(_ descriptor: Int32, phase: ConnectionRules.Phase, reason: ConnectionRules.Cut) {
    if phase == .awaitingHead && reason != .idle {
      let text = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
      var bytes = Array(text.utf8)
      _ = bytes.withUnsafeMutableBytes {
        send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
      }
    }
    if phase == .sending {
      var abort = linger(l_onoff: 1, l_linger: 0)
      _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
    }
    _ = shutdown(descriptor, Int32(SHUT_RDWR))
  }

  /// A connection opened on `descriptor`.
  func opened(_ connection: OpaquePointer?, descriptor: Int32) {
    guard let key = Self.key(connection), descriptor >= 0 else { return }
    let now = Self.now()
    state.withLock { $0.entries[key] = Entry(descriptor: descriptor, track: ConnectionRules.Track(now: now)) }
  }

  /// The connection closed: forgotten before libmicrohttpd closes its descriptor.
  func closed(_ connection: OpaquePointer?) {
    guard let key = Self.key(connection) else { return }
    _ = state.withLock { $0.entries.removeValue(forKey: key) }
  }

  /// What ``enter(_:_:)`` found.
  struct Entered {
    /// `false` when the watch has already cut the connection (the caller then ends the request).
    var alive = true
    /// The connection's progress as the phase began (not read for ``ConnectionRules/Phase/working``,
    /// which has no timeout).
    var progress: TCPProgress?
  }

  /// The connection enters `phase`: one lock and at most one `TCP_INFO` read, on every request.
  @discardableResult
  func enter(_ phase: ConnectionRules.Phase, _ connection: OpaquePointer?) -> Entered {
    guard let key = Self.key(connection) else { return Entered() }
    let now = Self.now()
    return state.withLock { state in
      guard let entry = state.entries[key] else { return Entered() }
      guard !entry.cut else { return Entered(alive: false, progress: TCPProgress.of(entry.descriptor)) }
      let progress = phase == .working ? nil : TCPProgress.of(entry.descriptor)
      state.entries[key]?.track.begin(phase, now: now, progress: progress)
      return Entered(progress: progress)
    }
  }

  private static func key(_ connection: OpaquePointer?) -> UInt? {
    connection.map { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer($0))) }
  }

  /// The monotonic clock, in seconds.
  static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
