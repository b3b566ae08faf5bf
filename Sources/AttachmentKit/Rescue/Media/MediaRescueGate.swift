import Glibc

/// Bounds the media rescues running at once in the process: a rescue waits for a slot until
/// its deadline, then gives up with `deadline_exceeded`. Only media rescues pass through it;
/// image rescues, hits and other misses never wait here.
final class MediaRescueGate: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  private var running = 0

  /// The process's gate.
  static let shared = MediaRescueGate()

  private init() {
    pthread_mutex_init(&mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  /// Runs `body` once fewer than `limit` rescues run, waiting until `deadline` at most.
  /// - Throws: `deadline_exceeded` when no slot freed in time, or what `body` throws.
  func run<T>(
    limit: Int, deadline: ContinuousClock.Instant?, _ body: () throws(AttachmentError) -> T
  ) throws(AttachmentError) -> T {
    pthread_mutex_lock(&mutex)
    while running >= max(1, limit) {
      guard let deadline else {
        pthread_cond_wait(&condition, &mutex)
        continue
      }
      let left = ContinuousClock.now.duration(to: deadline)
      guard left > .zero else {
        pthread_mutex_unlock(&mutex)
        throw AttachmentError(
          .deadlineExceeded, "The deadline passed while the media rescue waited for a slot.")
      }
      var now = timespec()
      clock_gettime(CLOCK_MONOTONIC, &now)
      let (seconds, attoseconds) = left.components
      var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
      var wholeSeconds = Int(now.tv_sec) + Int(seconds)
      if nanoseconds >= 1_000_000_000 {
        nanoseconds -= 1_000_000_000
        wholeSeconds += 1
      }
      var until = timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
      pthread_cond_timedwait(&condition, &mutex, &until)
    }
    running += 1
    pthread_mutex_unlock(&mutex)
    defer {
      pthread_mutex_lock(&mutex)
      running -= 1
      pthread_cond_signal(&condition)
      pthread_mutex_unlock(&mutex)
    }
    return try body()
  }
}
