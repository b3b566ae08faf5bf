import Glibc

/// State behind a `pthread_mutex_t`: the lock AttachmentKit, its test server and its samples use.
///
/// The standard library's `Mutex` would do, but on Linux it synchronizes through futex system
/// calls that ThreadSanitizer cannot see, so every access under it is reported as a race and
/// `swift test --sanitize=thread` becomes noise. A pthread mutex is intercepted by the
/// sanitizer and costs the same when uncontended.
public final class Locked<State>: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var state: State

  /// Makes a lock guarding `state`.
  public init(_ state: State) {
    self.state = state
    mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Runs `body` with exclusive access to the state. `body` must not take the same lock again.
  public func withLock<Result, Failure: Error>(
    _ body: (inout State) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&state)
  }
}
