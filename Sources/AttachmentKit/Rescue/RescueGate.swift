import Glibc

/// Bounds the rescues of one kind running at once in the process: a rescue waits for a slot
/// until its own deadline, then gives up with `deadline_exceeded`, so no rescue holds another
/// up for longer than the waiter's deadline. Hits and ordinary misses never wait here.
final class RescueGate: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  private var condition = pthread_cond_t()
  private var running = 0

  /// What the waiter is told it waited for, in a `deadline_exceeded` message.
  private let waitedFor: String

  /// The gate of media rescues (FFmpeg), as many at once as the configuration allows.
  static let media = RescueGate(waitedFor: "the media rescue waited for a slot")
  /// The gate of image rescues (libvips): one at a time, since libvips' error buffer is global
  /// and two large decodes at once would double the peak memory.
  static let image = RescueGate(waitedFor: "the image rescue waited for another rescue to finish")

  private init(waitedFor: String) {
    self.waitedFor = waitedFor
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
        throw AttachmentError(.deadlineExceeded, "The deadline passed while \(waitedFor).")
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
