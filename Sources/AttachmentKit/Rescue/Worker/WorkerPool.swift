import CWorkerIO
import Dispatch
import Glibc
import PosixLock

/// The rescue workers of one library (libvips or FFmpeg) and one ``RescueWorkerConfiguration``
/// in this process: at most ``RescueWorkerConfiguration/poolSize`` at once (image and media
/// rescues have pools of their own, so two long transcodes never hold an image rescue back),
/// started on the first rescue (a process that never rescues starts none), each running
/// ``RescueWorkerConfiguration/jobsPerWorker`` jobs (one by default) and replaced when it has,
/// dies, is killed at a deadline or cancellation, or grows past
/// ``RescueWorkerConfiguration/retireAboveResidentBytes``. Once a pool has run a job, it keeps
/// a started worker ready (a warm spare), so the next job does not wait for a start.
///
/// This is the one owner of worker processes: rescuers hand it a job and get the worker's
/// answer, or a typed refusal for everything that can go wrong around it.
final class WorkerPool: Sendable {
  private struct Key: Hashable {
    var configuration: RescueWorkerConfiguration
    var library: WorkerLibrary
  }

  /// The pool of each library and configuration in use, made on first use and kept for the
  /// process.
  private static let pools = Locked<[Key: WorkerPool]>([:])

  /// The pool of workers loading `library` with `configuration`.
  static func pool(for configuration: RescueWorkerConfiguration, library: WorkerLibrary) -> WorkerPool {
    pools.withLock { pools in
      let key = Key(configuration: configuration, library: library)
      if let pool = pools[key] { return pool }
      let pool = WorkerPool(configuration: configuration, library: library)
      pools[key] = pool
      return pool
    }
  }

  let configuration: RescueWorkerConfiguration
  /// The library every worker of this pool loads when it starts.
  let library: WorkerLibrary
  /// One permit per worker that may run at once.
  private let permits: DispatchSemaphore
  /// The pool's workers: those started and waiting for a job, and how many run one. Together
  /// never more than ``RescueWorkerConfiguration/poolSize`` (a worker being retired or killed
  /// no longer counts).
  private struct Workers {
    var idle: [WorkerProcess] = []
    var busy = 0
    /// The jobs checked out so far.
    var jobs = 0
    /// Spares being started.
    var sparesStarting = 0
    /// Jobs waiting for a spare being started.
    var waiting = 0
  }
  private let workers = Locked(Workers())

  private init(configuration: RescueWorkerConfiguration, library: WorkerLibrary) {
    self.configuration = configuration
    self.library = library
    permits = DispatchSemaphore(value: max(1, configuration.poolSize))
  }

  /// Starts a worker (loading the pool's library) when none is idle, so that a rescue the
  /// first bytes already call for finds it ready. Returns at once (the worker loads in its own
  /// process).
  func prestart() {
    guard
      workers.withLock({
        $0.idle.isEmpty && $0.sparesStarting == 0 && $0.busy < max(1, configuration.poolSize)
      }),
      let executable = RescueWorkers.executable(for: configuration),
      case .success(let worker) = WorkerProcess.start(
        executable, library: library, configuration: configuration)
    else { return }
    let surplus = workers.withLock { workers -> WorkerProcess? in
      guard workers.idle.count + workers.busy < max(1, configuration.poolSize) else { return worker }
      workers.idle.append(worker)
      return nil
    }
    surplus?.stop()
  }

  /// Runs `job` with `rescuer` in a worker as ``run(_:as:)`` does, but stops it at `earlier`,
  /// an instant before the job's own deadline that the rescuer keeps for itself or for the next
  /// rescuer: stopped there, with the job's deadline still ahead and its caller still waiting,
  /// it fails with the job's refusal and `reason` ("… Not rescued: `reason`."), not
  /// `deadline_exceeded`, so that the caller's miss goes on.
  func run(
    _ job: RescueJob, as rescuer: WorkerRescuer, stoppingAt earlier: ContinuousClock.Instant,
    because reason: String
  ) throws(AttachmentError) -> Rescue {
    var own = job
    own.deadline = job.deadline.map { min($0, earlier) } ?? earlier
    do {
      return try run(own, as: rescuer)
    } catch {
      let deadlineAhead = job.deadline.map { ContinuousClock.now < $0 } ?? true
      guard error.code == .deadlineExceeded, deadlineAhead, !job.isCancelled() else { throw error }
      throw job.refusal.error.notRescued(reason)
    }
  }

  /// Runs `job` with `rescuer` in a worker, blocking the calling (check) thread until it
  /// answers, the job's deadline passes or its caller cancels.
  /// - Returns: the rescue's provenance.
  /// - Throws: what the rescuer throws in the worker; `deadline_exceeded` or `cancelled` (the
  ///   worker is killed and the caller answered at once); `too_large` when the output grew past
  ///   its limit; the job's refusal with why it was not rescued when the worker dies (a crash,
  ///   the memory ceiling, its CPU time) or cannot start; `io_error` when a file cannot be opened.
  func run(_ job: RescueJob, as rescuer: WorkerRescuer) throws(AttachmentError) -> Rescue {
    let reply = try exchange(job, as: rescuer)
    if let rescue = reply.rescue { return rescue }
    throw reply.error?.error ?? job.refusal.notRescued("its worker gave no answer")
  }

  /// Sends `job` to a worker of this pool as `rescuer`'s work and returns its answer: the
  /// worker, its permit and the job's files are taken and given back here, and everything
  /// that can go wrong around the worker is thrown (see ``run(_:as:)``). A job that is no
  /// rescue (``WorkerRescuer/posterTime(_:)``) reads its own field of the answer.
  func exchange(_ job: RescueJob, as rescuer: WorkerRescuer) throws(AttachmentError) -> WorkerReply {
    let outputLimit = Self.outputLimit(job.limits)
    switch try attempt(job, as: rescuer) {
    case .replied(let reply):
      return reply
    case .stopped(.cancelled):
      throw AttachmentError.cancelledError()
    case .stopped:
      throw AttachmentError(
        .deadlineExceeded,
        "The deadline passed while the \(rescuer.noun) was rescued; its worker was stopped.")
    case .died(let death):
      if death.signal == SIGXFSZ || death.exitCode == WorkerMain.outputTooLarge {
        throw AttachmentError(
          .tooLarge,
          "The rescued file grew past the output limit of \(outputLimit) bytes; its worker was stopped.")
      }
      let ending = death.ending(ceiling: configuration.memoryCeilingBytes)
      throw job.refusal.notRescued(ending.reason, verdict: ending.verdict)
    }
  }

  /// Runs `job` in a worker of this pool as `rescuer`'s work and says how it ended: takes a
  /// permit, opens the job's files (given to an unprivileged worker for the job), checks out a
  /// worker, sets its hard limits for the job, and gives everything back. `inspect` sees the
  /// worker after it answered, while it is still alive (the sandbox report reads its `/proc`).
  /// - Throws: `deadline_exceeded` or `cancelled` while waiting for a permit; `io_error` when a
  ///   file cannot be opened; the job's refusal when no worker can start.
  func attempt(
    _ job: RescueJob, as rescuer: WorkerRescuer, inspecting inspect: ((WorkerProcess) -> Void)? = nil
  ) throws(AttachmentError) -> WorkerProcess.Outcome {
    guard let executable = RescueWorkers.executable(for: configuration) else {
      throw job.refusal.notRescued(RescueWorkers.missingExecutable)
    }
    try takePermit(until: job.deadline, isCancelled: job.isCancelled, waiting: rescuer.noun)
    defer { returnPermit() }
    let source = open(job.source, O_RDONLY | O_CLOEXEC)
    guard source >= 0 else { throw AttachmentError(.ioError, "The rescue's source cannot be opened.") }
    defer { close(source) }
    let output = open(job.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard output >= 0 else { throw AttachmentError(.ioError, "The rescue's output cannot be created.") }
    defer { close(output) }

    let worker: WorkerProcess
    switch checkOut(executable) {
    case .success(let ready): worker = ready
    case .failure(let failure):
      throw job.refusal.notRescued("its rescue worker cannot start: \(failure.reason)")
    }
    defer { workers.withLock { $0.busy -= 1 } }
    // The unprivileged worker of a root parent is given the job's two files for the job.
    let grant = WorkerFileGrant(source: source, output: output, for: worker)
    defer { grant.revoke() }
    let secondsLeft = job.deadline.map { deadline -> Double in
      let left = (deadline - ContinuousClock.now).components
      return max(0, Double(left.seconds) + Double(left.attoseconds) / 1e18)
    }
    worker.setLimit(RLIMIT_FSIZE, Self.outputLimit(job.limits))
    // CPU time as a backstop for the parent's kill: the time left on every core, and a margin;
    // SIGXCPU there, and the kernel's SIGKILL a second later.
    let cores = Double(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    let budget = UInt64(((secondsLeft ?? 600) * cores).rounded(.up)) + 2
    let cpuLimit = (worker.cpuSeconds ?? 0) + budget
    worker.setLimit(RLIMIT_CPU, cpuLimit, hard: cpuLimit + 1)

    let message = WorkerJob(
      rescuer: rescuer, bytes: job.bytes, refusal: job.refusal, limits: job.limits,
      secondsLeft: secondsLeft)
    RescueWorkers.countJob(rescuer.kind)
    let outcome = worker.run(
      message, source: grant.source, output: output, deadline: job.deadline, isCancelled: job.isCancelled)
    if case .replied = outcome {
      inspect?(worker)
      keep(worker)
    }
    return outcome
  }

  /// Waits for one of the pool's permits (a worker's place) until `deadline`, or until
  /// `isCancelled`; the caller gives it back with ``returnPermit()``.
  /// - Throws: `deadline_exceeded` ("while the `waiting` waited for a rescue worker") or
  ///   `cancelled`.
  func takePermit(
    until deadline: ContinuousClock.Instant?, isCancelled: () -> Bool, waiting: String
  ) throws(AttachmentError) {
    while true {
      if isCancelled() { throw AttachmentError.cancelledError() }
      var wait = DispatchTime.now() + .milliseconds(50)
      if let deadline {
        let left = deadline - ContinuousClock.now
        if left <= .zero {
          throw AttachmentError(
            .deadlineExceeded, "The deadline passed while the \(waiting) waited for a rescue worker.")
        }
        if left < .milliseconds(50) {
          let nanoseconds = left.components.attoseconds / 1_000_000_000
          wait = DispatchTime.now() + .nanoseconds(Int(nanoseconds) + 1)
        }
      }
      if permits.wait(timeout: wait) == .success { return }
    }
  }

  /// Gives back a permit taken with ``takePermit(until:isCancelled:waiting:)``.
  func returnPermit() { permits.signal() }

  /// Workers started and waiting for a job.
  var idleCount: Int { workers.withLock { $0.idle.count } }

  /// Ends every idle worker of every pool and waits for each (see
  /// ``WorkerProcess/finish()``), and for the workers let go after their last job to be reaped;
  /// workers busy with a job are left to it.
  static func finishAll() {
    for pool in pools.withLock({ Array($0.values) }) {
      pool.takeIdle().forEach { $0.finish() }
    }
    WorkerProcess.awaitReaped()
  }

  /// Lets every idle worker go (each is killed and reaped in the background).
  func retireIdle() {
    takeIdle().forEach { $0.stop() }
  }

  /// The idle workers, no longer the pool's.
  private func takeIdle() -> [WorkerProcess] {
    workers.withLock { workers in
      defer { workers.idle.removeAll() }
      return workers.idle
    }
  }

  /// An idle worker, or a new one started from `executable`, counted as busy (the caller holds
  /// a permit, so busy workers never outnumber the pool; the caller uncounts it when done).
  /// A pool that has run a job before keeps one spare ahead: when this job takes the last idle
  /// worker (or one still starting), another is started for the next job. A job that finds a
  /// spare still starting waits for it: it is ready sooner than a worker started now.
  private func checkOut(_ executable: String) -> Result<WorkerProcess, WorkerStartFailure> {
    enum Way { case ready(WorkerProcess), waitForSpare, startOwn }
    let (way, spare) = workers.withLock { workers -> (Way, Bool) in
      workers.busy += 1
      workers.jobs += 1
      let way: Way
      if let ready = workers.idle.popLast() {
        way = .ready(ready)
      } else if workers.sparesStarting > workers.waiting {
        workers.waiting += 1
        way = .waitForSpare
      } else {
        way = .startOwn
      }
      let ahead = workers.idle.count + workers.sparesStarting - workers.waiting
      let spare = workers.jobs > 1 && ahead < 1
      if spare { workers.sparesStarting += 1 }
      return (way, spare)
    }
    if spare { startSpare(executable) }
    switch way {
    case .ready(let worker): return .success(worker)
    case .waitForSpare: if let arrived = waitForSpare() { return .success(arrived) }
    case .startOwn: break
    }
    let started = WorkerProcess.start(executable, library: library, configuration: configuration)
    if case .failure = started { workers.withLock { $0.busy -= 1 } }
    return started
  }

  /// A spare being started, once one is ready (polled every 0.2 ms, at most 2 s); `nil` when
  /// none is left starting (one failed). The caller runs on a check thread, which may block.
  private func waitForSpare() -> WorkerProcess? {
    for _ in 0..<10_000 {
      let (taken, starting) = workers.withLock { workers -> (WorkerProcess?, Int) in
        let taken = workers.idle.popLast()
        if taken != nil || workers.sparesStarting == 0 { workers.waiting -= 1 }
        return (taken, workers.sparesStarting)
      }
      if let taken { return taken }
      if starting == 0 { return nil }
      usleep(200)
    }
    workers.withLock { $0.waiting -= 1 }
    return nil
  }

  /// Starts a worker in the background and puts it among the idle ones (a spare).
  private func startSpare(_ executable: String) {
    let (library, configuration) = (library, configuration)
    BackgroundWork.start("AttachmentKit.worker-spare", qos: .userInitiated) { [self] in
      let started = WorkerProcess.start(executable, library: library, configuration: configuration)
      workers.withLock { workers in
        workers.sparesStarting -= 1
        if case .success(let worker) = started { workers.idle.append(worker) }
      }
    }
  }

  /// Puts a worker that answered back among the idle ones, or retires it when it has grown.
  private func keep(_ worker: WorkerProcess) {
    if worker.jobsSent >= worker.jobLimit {
      worker.release()
      return
    }
    if let resident = worker.residentBytes, resident > configuration.retireAboveResidentBytes {
      worker.stop()
      return
    }
    worker.setLimit(RLIMIT_FSIZE, 0)  // nothing is written between jobs
    workers.withLock { $0.idle.append(worker) }
  }

  /// The largest file a job may write, in bytes: the largest attachment its limits allow, with
  /// room for an encoder that writes past the limit before it is cut down to it.
  static func outputLimit(_ limits: ValidationLimits) -> UInt64 {
    let largest = max(limits.maximumImageBytes, limits.maximumAudioBytes, limits.maximumVideoBytes, 0)
    return UInt64(largest) * 2 + (1 << 20)
  }
}
