import Dispatch
import Glibc
import PosixLock

/// The SHA-256 of a body, computed while the body is written, mostly off the engine thread.
///
/// The first ``inlineBytes`` are hashed on the engine thread as they arrive (a small body never
/// leaves it: a thread hop would cost more than hashing it). Past that, the engine thread only
/// records how far the file is written; once writing is ``batchBytes`` ahead of hashing, a job
/// on a background queue reads whole ``readBytes`` pieces back through the page cache and
/// hashes them, so hashing a large body overlaps its transfer on another core instead of
/// following every write on the one thread that serves every transfer. Memory is bounded: one
/// ``readBytes`` buffer per large body in flight.
///
/// Engine thread: ``append(_:writtenTotal:)`` and ``finalize(total:)``. The hasher has one owner
/// at a time, handed over under the state's lock. ``finalize(total:)`` never waits for a job that
/// has not started (the queue may be busy): it takes the work back and reads the rest itself,
/// and waits only for a job that is already running.
final class BodyDigest: @unchecked Sendable {
  /// Bytes hashed inline before hashing moves off the engine thread: 1 MiB.
  static let inlineBytes: Int64 = 1 << 20
  /// The background job's read size: 256 KiB. The job reads whole pieces only and leaves a
  /// shorter tail to ``finalize(total:)``.
  static let readBytes = 256 * 1024
  /// How far writing must be ahead of hashing before a job is started: 1 MiB. libcurl hands
  /// over at most 16 KiB a write; waking a job for each would cost a thread hand-off (and a
  /// futex round trip) per 16 KiB, more than hashing them.
  static let batchBytes: Int64 = 1 << 20

  private struct State {
    /// Bytes written to the file so far (as the engine has told).
    var written: Int64 = 0
    /// Bytes hashed so far.
    var hashed: Int64 = 0
    /// Whether a background job is queued or running (it owns the hasher).
    var scheduled = false
    /// Whether that job has started running.
    var active = false
    /// Whether reading the file back failed.
    var failed = false
  }

  private let hasher = SHA256Hasher()
  private let state = Locked(State())
  private let idle = DispatchSemaphore(value: 0)
  /// Where hashing happens (engine thread only).
  private enum Mode {
    /// On the engine thread, as bytes arrive.
    case inline
    /// Nowhere yet: a small body is the caller's to hash (see ``isLeftToCaller``).
    case deferred
    /// On the background job, reading back through ``reader``.
    case offloaded
    /// On the engine thread for good: the file could not be reopened for reading.
    case inlineOnly
    /// Nowhere: the file could not be reopened and the first bytes were never hashed, so the
    /// caller hashes the whole body.
    case leftToCaller
  }

  /// The body's writing descriptor, reopened read-only when hashing moves off the thread.
  private let writer: Int32
  private var mode: Mode
  private var reader: Int32 = -1

  /// Hashes the body written through `writer` (open at least until the first
  /// ``inlineBytes`` are written, when it is reopened for reading). With
  /// `leavingSmallBodyToCaller`, a body of at most ``inlineBytes`` is not hashed at all
  /// (see ``isLeftToCaller``).
  init(writer: Int32, leavingSmallBodyToCaller: Bool = false) {
    self.writer = writer
    mode = leavingSmallBodyToCaller ? .deferred : .inline
  }

  deinit {
    if reader >= 0 { close(reader) }
  }

  /// Whether hashing has moved to the background job (for tests).
  var isOffloaded: Bool { mode == .offloaded }

  /// Whether the body stayed small enough to be left to the caller, unhashed: then
  /// ``finalize(total:)`` is not called and the download reports an empty digest.
  var isLeftToCaller: Bool { mode == .deferred || mode == .leftToCaller }

  /// Takes the chunk just written, after which the file holds `writtenTotal` bytes.
  func append(_ bytes: UnsafeRawBufferPointer, writtenTotal: Int64) {
    if mode == .inline || mode == .deferred, writtenTotal > Self.inlineBytes {
      // A deferred body's first bytes were never hashed: the job reads them back too.
      if startOffloading() {
        mode = .offloaded
      } else {
        mode = mode == .deferred ? .leftToCaller : .inlineOnly
      }
    }
    switch mode {
    case .deferred, .leftToCaller:
      state.withLock { $0.written = writtenTotal }
    case .inline, .inlineOnly:
      hasher.update(bytes)
      state.withLock {
        $0.written = writtenTotal
        $0.hashed = writtenTotal
      }
    case .offloaded:
      advance(to: writtenTotal)
    }
  }

  /// The digest of the first `total` bytes (all of the body), as 64 lower-case hex digits, or
  /// `nil` when reading the body back or libcrypto failed. Waits for the background job to
  /// catch up (it runs on another core, so it is behind by little more than a read).
  func finalize(total: Int64) -> String? {
    if mode == .offloaded {
      let (claimed, waiting) = state.withLock { state -> (Bool, Bool) in
        state.written = total
        if state.scheduled && !state.active {
          state.scheduled = false  // not started yet: take the work back
          return (true, false)
        }
        return (!state.scheduled, state.scheduled)
      }
      if waiting {
        while state.withLock({ $0.scheduled }) { idle.wait() }
      }
      if claimed || state.withLock({ $0.hashed < total && !$0.failed }) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBytes, alignment: 16)
        defer { buffer.deallocate() }
        while readBack(into: buffer) {}
      }
      if state.withLock({ $0.failed || $0.hashed != total }) { return nil }
    }
    return hasher.finalize()
  }

  /// Opens the reading descriptor; `false` (hash inline from now on) when it cannot.
  private func startOffloading() -> Bool {
    // Through /proc the file reopens whether it has a name or not (O_TMPFILE).
    reader = open("/proc/self/fd/\(writer)", O_RDONLY | O_CLOEXEC)
    return reader >= 0
  }

  private func advance(to total: Int64) {
    let start = state.withLock { state -> Bool in
      state.written = max(state.written, total)
      guard !state.scheduled, state.written - state.hashed >= Self.batchBytes, !state.failed else {
        return false
      }
      state.scheduled = true
      return true
    }
    if start { BackgroundWork.start("AttachmentKit.body-digest", qos: .default) { self.catchUp() } }
  }

  /// The background job: hash from where hashing stopped to where writing is, until caught up,
  /// unless ``finalize(total:)`` took the work back before it started.
  private func catchUp() {
    let started = state.withLock { state -> Bool in
      guard state.scheduled else { return false }
      state.active = true
      return true
    }
    guard started else { return }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readBytes, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      if readBack(into: buffer, wholePiecesOnly: true) { continue }
      let stopped = state.withLock { state -> Bool in
        // more came meanwhile: go on
        guard state.written - state.hashed < Int64(Self.readBytes) || state.failed else { return false }
        state.scheduled = false
        state.active = false
        return true
      }
      if stopped { break }
    }
    idle.signal()
  }

  /// Reads and hashes the next piece between what is hashed and what is written; `false` when
  /// there is nothing more (caught up, or less than a whole buffer when `wholePiecesOnly`) or
  /// reading failed. Only the hasher's owner calls it.
  private func readBack(into buffer: UnsafeMutableRawBufferPointer, wholePiecesOnly: Bool = false) -> Bool {
    let (from, to, failed) = state.withLock { ($0.hashed, $0.written, $0.failed) }
    guard from < to, !failed else { return false }
    if wholePiecesOnly && to - from < Int64(buffer.count) { return false }
    var count = 0
    repeat {
      count = pread(reader, buffer.baseAddress, min(buffer.count, Int(to - from)), off_t(from))
    } while count < 0 && errno == EINTR
    guard count > 0 else {
      state.withLock { $0.failed = true }
      return false
    }
    hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    state.withLock { $0.hashed += Int64(count) }
    return true
  }
}
