import Glibc
import PosixLock
import Synchronization

/// How late this test process has been getting to run lately: what a loaded machine adds to
/// every timing a test takes, measured instead of guessed.
///
/// Two probes, started once by ``start()`` (the `.threadOfItsOwn` and `.cpuBound` traits call
/// it, so it runs from a parallel run's first tests): a thread that sleeps 10 ms at a time, which
/// oversleeps when the machine's cores are taken (busy loops, other processes), and a task on
/// Swift's cooperative pool that does the same, which oversleeps when the pool's threads are held
/// by other tests' work. Each oversleep over 20 ms is kept for two minutes.
///
/// ``deadlineMargin`` adds the worst seen since the running test began (``testStart``, set by the
/// `.threadOfItsOwn` and `.cpuBound` traits; the last minute outside them), up to ``judgedLag``,
/// so a test of "answered by its deadline" counts the library's own lateness, not the time its
/// answer queued behind other work: alone on a machine (as the benchmarks measure
/// `deadline_overshoot_p99_ms`) the probes see almost nothing and the margin stays 2 s.
public enum SchedulingLag {
  /// When the running test began (its trait's scope), or `nil` outside a test with such a trait.
  @TaskLocal public static var testStart: ContinuousClock.Instant?

  /// One oversleep: when it ended, and by how much.
  private struct Sample {
    var end: ContinuousClock.Instant
    var lag: Duration
  }

  private static let samples = Locked<[Sample]>([])
  private static let started = Atomic<Bool>(false)

  /// The smallest oversleep kept: below it, ordinary timer slack.
  private static let threshold: Duration = .milliseconds(20)
  /// How long a sample is kept.
  private static let kept: Duration = .seconds(120)
  /// The probes' sleep.
  private static let period: Duration = .milliseconds(10)

  /// Starts both probes, once per process; later calls return at once.
  public static func start() {
    guard started.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
      return
    }
    _ = spawnDetachedThread {
      while true {
        let before = ContinuousClock.now
        usleep(10_000)
        record(since: before)
      }
    }
    Task.detached(priority: .medium) {
      while true {
        let before = ContinuousClock.now
        try? await Task.sleep(for: period)
        record(since: before)
      }
    }
  }

  /// The worst oversleep either probe saw that ended within `window` before now; zero when none
  /// (or before ``start()``).
  public static func worst(within window: Duration = .seconds(60)) -> Duration {
    worst(since: ContinuousClock.now - window)
  }

  /// The worst oversleep either probe saw that ended after `start` (after the last minute when
  /// `nil`); zero when none.
  public static func worst(since start: ContinuousClock.Instant?) -> Duration {
    let since = start ?? ContinuousClock.now - .seconds(60)
    return samples.withLock { samples in
      samples.reduce(Duration.zero) { $1.end >= since ? max($0, $1.lag) : $0 }
    }
  }

  private static func record(since before: ContinuousClock.Instant) {
    let end = ContinuousClock.now
    let lag = end - before - period
    guard lag > threshold else { return }
    samples.withLock { samples in
      samples.removeAll { end - $0.end > kept }
      samples.append(Sample(end: end, lag: lag))
    }
  }
}
