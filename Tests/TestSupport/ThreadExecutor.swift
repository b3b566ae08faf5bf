import Glibc

/// A task executor with one thread of its own: the jobs of the tasks that prefer it run there,
/// one at a time, in the order they came.
///
/// A test whose synchronous work is long (CPU-bound probes of many files, a decompression bomb
/// decoded in a debug build) holds a thread of the cooperative pool for all of it, and the pool
/// has one per core: meanwhile the other tests' tasks wait to be resumed, and their deadlines
/// pass. Run under ``withThreadOfItsOwn(_:)``, such a test leaves the pool alone and competes
/// for the processor as a thread, which the kernel shares fairly.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
  // The queue is guarded by `mutex` (a pthread mutex and condition: visible to ThreadSanitizer).
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
  private var jobs: [UnownedJob] = []
  private var stopping = false
  private var started = false

  /// Starts the executor's thread.
  public init() {
    mutex.initialize(to: pthread_mutex_t())
    condition.initialize(to: pthread_cond_t())
    pthread_mutex_init(mutex, nil)
    pthread_cond_init(condition, nil)
    started = spawnDetachedThread { [self] in runJobs() }
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deinitialize(count: 1)
    mutex.deinitialize(count: 1)
    condition.deallocate()
    mutex.deallocate()
  }

  /// Queues `job` for the executor's thread; once the executor is stopping (or when its thread
  /// could not start), hands it to the global concurrent executor instead.
  public func enqueue(_ job: consuming ExecutorJob) {
    let unowned = UnownedJob(job)
    pthread_mutex_lock(mutex)
    let accepted = started && !stopping
    if accepted {
      jobs.append(unowned)
      pthread_cond_signal(condition)
    }
    pthread_mutex_unlock(mutex)
    if !accepted { globalConcurrentExecutor.enqueue(unowned) }
  }

  /// Lets the thread finish the jobs already queued and end.
  public func stop() {
    pthread_mutex_lock(mutex)
    stopping = true
    pthread_cond_signal(condition)
    pthread_mutex_unlock(mutex)
  }

  private func runJobs() {
    while true {
      pthread_mutex_lock(mutex)
      while jobs.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
      if jobs.isEmpty {
        pthread_mutex_unlock(mutex)
        return
      }
      let job = jobs.removeFirst()
      pthread_mutex_unlock(mutex)
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// Runs `body` with a new ``ThreadExecutor`` as the task's executor preference: its
/// synchronous code, and that of the child tasks it makes, runs on that thread instead of the
/// cooperative pool. The task stays the same (its task-local values, a test's issue recording
/// among them, are kept).
public func withThreadOfItsOwn<T, E: Error>(
  isolation: isolated (any Actor)? = #isolation, _ body: () async throws(E) -> T
) async throws(E) -> T {
  let executor = ThreadExecutor()
  defer { executor.stop() }
  return try await withTaskExecutorPreference(executor, isolation: isolation, operation: body)
}

extension ThreadExecutor {
  /// One executor for the whole process, never stopped: the CPU-bound tests all run on its one
  /// thread, one after another, so together they keep at most one core busy and none of the
  /// cooperative pool's threads.
  public static let sharedWorker = ThreadExecutor()
}

/// Runs `body` with ``ThreadExecutor/sharedWorker`` as the task's executor preference (see
/// ``withThreadOfItsOwn(isolation:_:)``).
public func withSharedWorkerThread<T, E: Error>(
  isolation: isolated (any Actor)? = #isolation, _ body: () async throws(E) -> T
) async throws(E) -> T {
  try await withTaskExecutorPreference(ThreadExecutor.sharedWorker, isolation: isolation, operation: body)
}
