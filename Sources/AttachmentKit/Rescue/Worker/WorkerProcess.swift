import CWorkerIO
import Glibc
import PosixLock

/// One rescue worker, seen from its parent: a child process and the parent's end of its socket.
///
/// The pool hands a worker to one job at a time, so its methods are never called concurrently.
final class WorkerProcess: @unchecked Sendable {
  /// The worker's process id.
  let pid: pid_t
  private let socket: Int32
  /// The sandbox layers its spawn put in place (`AK_LAYER_*`).
  let layers: UInt32
  /// The jobs it may run before it exits (1: one job per worker).
  let jobLimit: Int
  /// The jobs it has been sent.
  private(set) var jobsSent = 0
  /// The worker's peak address space in bytes (`VmPeak`), read while a job runs: what its
  /// memory ceiling counts, gone from `/proc` once it has died.
  private var addressSpacePeak: Int64 = 0

  private init(pid: pid_t, socket: Int32, layers: UInt32, jobLimit: Int) {
    self.pid = pid
    self.socket = socket
    self.layers = layers
    self.jobLimit = jobLimit
  }

  /// Whether it runs as the unprivileged user (the parent is root): the job's files are handed
  /// to that user for the job (``WorkerPool``).
  var isUnprivileged: Bool { layers & UInt32(AK_LAYER_UNPRIVILEGED_USER) != 0 }

  /// Starts `executable` as a worker with `configuration`'s limits, loading `library` before
  /// its first job, in every sandbox layer this machine grants (``SpawnLayers``). The parent is
  /// made undumpable first. Returns why it could not, as a reason for a refusal.
  static func start(
    _ executable: String, library: WorkerLibrary?, configuration: RescueWorkerConfiguration
  ) -> Result<WorkerProcess, WorkerStartFailure> {
    _ = ak_make_undumpable()
    var layers = SpawnLayers.requested
    while true {
      switch spawn(executable, library: library, configuration: configuration, layers: layers) {
      case .success(let worker):
        SpawnLayers.record(layers, jobs: max(1, configuration.jobsPerWorker))
        return .success(worker)
      case .failure(let failure):
        guard let stage = failure.stage, let fewer = SpawnLayers.fallback(from: layers, failedAt: stage)
        else {
          return .failure(failure)
        }
        layers = fewer
      }
    }
  }

  /// One attempt of ``start(_:library:configuration:)`` with `layers`.
  private static func spawn(
    _ executable: String, library: WorkerLibrary?, configuration: RescueWorkerConfiguration, layers: UInt32
  ) -> Result<WorkerProcess, WorkerStartFailure> {
    var pair: [Int32] = [-1, -1]
    let made = ak_worker_socketpair(&pair)
    guard made == 0 else {
      return .failure(
        WorkerStartFailure(reason: "its socket cannot be made: \(String(cString: strerror(-made)))"))
    }
    let jobLimit = max(1, configuration.jobsPerWorker)
    // RLIMIT_NPROC counts the worker's own threads only in a user namespace of its own;
    // elsewhere it would count every process of the user.
    let threads = layers & UInt32(AK_LAYER_USER_NAMESPACE) != 0 ? configuration.maximumThreads : 0
    var arguments = [
      executable, RescueWorkers.workerArgument, "--memory", String(configuration.memoryCeilingBytes),
      "--files", String(configuration.maximumOpenFiles), "--jobs", String(jobLimit),
      "--threads", String(threads),
      // Landlock's rules name the first job's files, so a worker that runs more has none.
      "--landlock", jobLimit == 1 ? "1" : "0",
    ]
    if let library { arguments += ["--preload", library.rawValue] }
    let environment = WorkerProcess.environment()
    var request = ak_spawn_request(
      layers: layers, uid: SpawnLayers.unprivilegedID, gid: SpawnLayers.unprivilegedID)
    var stage: Int32 = 0
    let pid = withCStrings(arguments) { argv in
      withCStrings(environment) { envp in ak_spawn_worker(executable, argv, envp, pair[1], &request, &stage) }
    }
    close(pair[1])
    guard pid > 0 else {
      close(pair[0])
      return .failure(
        WorkerStartFailure(
          reason: "its executable \(executable) cannot be started: \(String(cString: strerror(-pid)))",
          stage: stage == 0 ? nil : stage))
    }
    return .success(WorkerProcess(pid: pid, socket: pair[0], layers: layers, jobLimit: jobLimit))
  }

  /// A worker's environment: nothing of the parent's but what sanitizer builds need, glibc's
  /// malloc held to two arenas (each arena reserves 64 MiB of address space, which counts
  /// against the worker's ceiling), and the Swift runtime's crash backtracer off (it would try
  /// to start a program, which the filter forbids; a crash is the parent's to report).
  /// `VIPSHOME` names no directory, so libvips loads none of its modules at start-up (about
  /// 40 ms of a worker's start); the ones allowed loaders need are loaded before the worker
  /// confines itself (``Libvips/loadModule(_:)``).
  private static func environment() -> [String] {
    var environment = ["MALLOC_ARENA_MAX=2", "SWIFT_BACKTRACE=enable=no", "VIPSHOME=/nonexistent"]
    for name in ["ASAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"] {
      if let value = getenv(name) { environment.append("\(name)=\(String(cString: value))") }
    }
    return environment
  }

  /// How a job ended.
  enum Outcome {
    /// The worker answered.
    case replied(WorkerReply)
    /// The worker died before it answered (it is reaped).
    case died(WorkerDeath)
    /// The deadline passed or the caller cancelled: the worker was killed.
    case stopped(ProbeStop)
  }

  /// Sends `job` with its source and output descriptors and waits for the answer, until
  /// `deadline` or until `isCancelled` says the caller is gone (checked every 50 ms): then the
  /// worker is killed at once (and reaped in the background).
  func run(
    _ job: WorkerJob, source: Int32, output: Int32, deadline: ContinuousClock.Instant?,
    isCancelled: () -> Bool
  ) -> Outcome {
    jobsSent += 1
    guard let message = WireCoding.encode(job), message.count <= workerMessageLimit,
      message.withUnsafeBytes({ ak_send_with_fds(socket, $0.baseAddress, $0.count, source, output) }) == 0
    else {
      return .died(reap())
    }
    while true {
      if isCancelled() {
        stop()
        return .stopped(.cancelled)
      }
      var timeout: Int32 = 50
      if let deadline {
        let left = deadline - ContinuousClock.now
        if left <= .zero {
          stop()
          return .stopped(.deadline)
        }
        let milliseconds =
          left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000
        timeout = Int32(clamping: min(50, milliseconds + 1))
      }
      addressSpacePeak = max(addressSpacePeak, Self.statusFigure("VmPeak", of: "\(pid)") ?? 0)
      var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, timeout)
      guard ready > 0 else { continue }
      var buffer = [UInt8](repeating: 0, count: workerMessageLimit)
      var passed1: Int32 = -1
      var passed2: Int32 = -1
      let length = buffer.withUnsafeMutableBytes {
        ak_receive_with_fds(socket, $0.baseAddress, $0.count, &passed1, &passed2)
      }
      if passed1 >= 0 { close(passed1) }
      if passed2 >= 0 { close(passed2) }
      if length == -Int(EAGAIN) || length == -Int(EINTR) { continue }
      guard length > 0, let reply = WireCoding.decode(WorkerReply.self, from: Array(buffer[0..<length]))
      else {
        return .died(reap())
      }
      return .replied(reply)
    }
  }

  /// The worker's resident memory now, in bytes (`/proc/PID/statm`); `nil` when unknown.
  var residentBytes: Int64? {
    guard let bytes = procFile("statm") else { return nil }
    let fields = bytes.split(separator: UInt8(ascii: " "))
    guard fields.count > 1, let pages = Int64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
    return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// The CPU time the worker has used, in whole seconds (rounded up; `/proc/PID/stat`).
  var cpuSeconds: UInt64? {
    guard let bytes = procFile("stat") else { return nil }
    let fields = ProcText.statFields(String(decoding: bytes, as: UTF8.self))
    guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else {
      return nil
    }
    let ticks = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
    return (user + system + ticks - 1) / ticks
  }

  /// A figure of `/proc/<process>/status` (given there in KiB) in bytes, e.g. `VmPeak`;
  /// `process` is a process id or `self`. `nil` when the process or the figure is not there.
  static func statusFigure(_ name: String, of process: String) -> Int64? {
    guard let bytes = FileSystem.readSmallFile("/proc/\(process)/status") else { return nil }
    return ProcText.statusNumber(name, in: String(decoding: bytes, as: UTF8.self)).map { $0 * 1024 }
  }

  /// The worker's `/proc/PID/<name>`.
  private func procFile(_ name: String) -> [UInt8]? {
    FileSystem.readSmallFile("/proc/\(pid)/\(name)")
  }

  /// Sets a limit of the worker's for its job: past the soft limit the kernel signals it
  /// (SIGXCPU, SIGXFSZ); a worker that runs one job gets the hard limit too (`hard`, else the
  /// soft value), past which the kernel kills it (CPU) or refuses the write (file size). A
  /// reused worker gets the soft limit only: a hard limit, once lowered, cannot be raised again
  /// for its next job without `CAP_SYS_RESOURCE`. Its filter forbids the worker raising either.
  func setLimit(_ resource: __rlimit_resource, _ value: UInt64, hard: UInt64? = nil) {
    let number = Int32(resource.rawValue)
    if jobLimit == 1, ak_set_limit(pid, number, value, hard ?? value) == 0 { return }
    _ = ak_set_limit(pid, number, value, ak_hard_limit(pid, number))
  }

  /// Kills the worker now (`SIGKILL`); it is reaped in the background, so a large worker's
  /// teardown costs its caller nothing.
  func stop() {
    kill(pid, SIGKILL)
    close(socket)
    Self.reapInBackground(pid)
  }

  /// Lets a worker that has run its last job go: its socket closes, it exits, and it is reaped
  /// in the background.
  func release() {
    close(socket)
    Self.reapInBackground(pid)
  }

  /// Workers let go and not yet reaped.
  private static let reaping = Locked<Set<pid_t>>([])

  /// Reaps `pid` on a thread of its own.
  private static func reapInBackground(_ pid: pid_t) {
    reaping.withLock { _ = $0.insert(pid) }
    BackgroundWork.start("AttachmentKit.worker-reap", qos: .utility) {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      reaping.withLock { _ = $0.remove(pid) }
    }
  }

  /// Waits (5 s at most, polled every millisecond) until every worker let go or killed has been
  /// reaped, so that a process that exits next counts them in its own resource use.
  static func awaitReaped() {
    for _ in 0..<5_000 where !reaping.withLock({ $0.isEmpty }) { usleep(1_000) }
  }

  /// Ends an idle worker and waits for it: it holds no job, so it is killed at once (a spare
  /// may still be loading its library, which a closed socket would wait out), and it is reaped
  /// here, so that a process that exits next counts its workers in its own resource use
  /// (`wait4` of its parent, GNU time's peak memory).
  func finish() {
    kill(pid, SIGKILL)
    close(socket)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
  }

  /// Waits for a worker that died (or is dying) and says how it ended.
  private func reap() -> WorkerDeath {
    close(socket)
    var status: Int32 = 0
    var usage = rusage()
    var result: pid_t
    repeat {
      result = wait4(pid, &status, 0, &usage)
    } while result < 0 && errno == EINTR
    return WorkerDeath(
      status: result == pid ? status : nil, peakResidentBytes: Int64(usage.ru_maxrss) * 1024,
      peakAddressSpaceBytes: addressSpacePeak)
  }
}

/// Why a worker could not be started, as a reason for a refusal.
struct WorkerStartFailure: Error {
  var reason: String
  /// The step of the spawn that failed (`AK_SPAWN_STAGE_*`), when it was one.
  var stage: Int32? = nil
}

/// How a worker ended without answering.
struct WorkerDeath: Sendable {
  /// The wait status (`nil`: it could not be read).
  var status: Int32?
  /// The worker's peak resident memory, in bytes.
  var peakResidentBytes: Int64
  /// Its peak address space last seen while it ran, in bytes (0: never read).
  var peakAddressSpaceBytes: Int64 = 0

  /// Its exit status, when it exited (rather than being killed).
  var exitCode: Int32? {
    guard let status, status & 0x7f == 0 else { return nil }
    return (status >> 8) & 0xff
  }

  /// The signal that killed it, if one did.
  var signal: Int32? {
    guard let status, status & 0x7f != 0, status & 0x7f != 0x7f else { return nil }
    return status & 0x7f
  }

  /// Why the rescue failed, for its refusal ("… Not rescued: …"), given the worker's ceiling,
  /// and the verdict on the source when the worker's end is one (a signal: a crash, the
  /// filter, the CPU limit or the memory ceiling).
  func ending(ceiling: Int64) -> (reason: String, verdict: AttachmentError.SourceVerdict?) {
    guard let signal else {
      let code = status.map { ($0 >> 8) & 0xff }
      if code == WorkerMain.cannotConfine {
        return (
          "its worker cannot confine itself (is libseccomp2 installed?), and does not run unconfined", nil
        )
      }
      if code == WorkerMain.outputTooLarge { return ("its output grew past the limit", nil) }
      return ("its worker exited\(code.map { " with status \($0)" } ?? "") before it answered", nil)
    }
    let name = String(cString: strsignal(signal))
    if signal == SIGSYS {
      return (
        "the decoder made a system call its sandbox refuses (\(RescueFallback.workerDied) \(signal): \(name))",
        .workerDied
      )
    }
    if signal == SIGXCPU {
      return ("\(RescueFallback.cpuExhausted) (its worker was killed: \(name))", .cpuExhausted)
    }
    // Near the ceiling: the allocation that failed was most likely what killed it (the
    // address space is read every 50 ms, so the last reading trails the fatal one).
    if peakResidentBytes * 4 >= ceiling * 3 || peakAddressSpaceBytes * 10 >= ceiling * 9 {
      return (
        "\(RescueFallback.memoryExhausted) (\(ceiling >> 20) MiB; \(RescueFallback.workerDied) \(signal): \(name))",
        .memoryExhausted
      )
    }
    return ("the decoder failed (\(RescueFallback.workerDied) \(signal): \(name))", .workerDied)
  }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result)
  -> Result
{
  let pointers = strings.map { strdup($0) }
  defer { pointers.forEach { free($0) } }
  return body(pointers + [nil])
}
