import CWorkerIO
import Glibc

/// One rescue worker, seen from its parent: a child process and the parent's end of its socket.
///
/// The pool hands a worker to one job at a time, so its methods are never called concurrently.
final class WorkerProcess: @unchecked Sendable {
  /// The worker's process id.
  let pid: pid_t
  private let socket: Int32
  /// The worker's peak address space in bytes (`VmPeak`), read while a job runs: what its
  /// memory ceiling counts, gone from `/proc` once it has died.
  private var addressSpacePeak: Int64 = 0

  private init(pid: pid_t, socket: Int32) {
    self.pid = pid
    self.socket = socket
  }

  /// Starts `executable` as a worker with `configuration`'s limits, loading `library` before
  /// its first job. Returns why it could not, as a reason for a refusal.
  static func start(
    _ executable: String, library: WorkerLibrary?, configuration: RescueWorkerConfiguration
  ) -> Result<WorkerProcess, WorkerStartFailure> {
    var pair: [Int32] = [-1, -1]
    let made = ak_worker_socketpair(&pair)
    guard made == 0 else {
      return .failure(
        WorkerStartFailure(reason: "its socket cannot be made: \(String(cString: strerror(-made)))"))
    }
    var arguments = [
      executable, RescueWorkers.workerArgument, "--memory", String(configuration.memoryCeilingBytes),
      "--files",
      String(configuration.maximumOpenFiles),
    ]
    if let library { arguments += ["--preload", library.rawValue] }
    let environment = WorkerProcess.environment()
    let pid = withCStrings(arguments) { argv in
      withCStrings(environment) { envp in ak_spawn_worker(executable, argv, envp, pair[1]) }
    }
    close(pair[1])
    guard pid > 0 else {
      close(pair[0])
      return .failure(
        WorkerStartFailure(
          reason: "its executable \(executable) cannot be started: \(String(cString: strerror(-pid)))"))
    }
    return .success(WorkerProcess(pid: pid, socket: pair[0]))
  }

  /// A worker's environment: nothing of the parent's but what sanitizer builds need, glibc's
  /// malloc held to two arenas (each arena reserves 64 MiB of address space, which counts
  /// against the worker's ceiling), and the Swift runtime's crash backtracer off (it would try
  /// to start a program, which the filter forbids; a crash is the parent's to report).
  /// `VIPSHOME` names no directory, so libvips loads none of its modules at start-up (about
  /// 40 ms of a worker's start); the one an allowed loader needs is loaded on demand
  /// (``Libvips/loadModule(_:)``).
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
    let text = String(decoding: bytes, as: UTF8.self)
    guard let close = text.lastIndex(of: ")") else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 0, utime field 11, stime field 12.
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
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + ":")
    {
      return line.split(separator: " ").compactMap { Int64($0) }.first.map { $0 * 1024 }
    }
    return nil
  }

  /// The worker's `/proc/PID/<name>`.
  private func procFile(_ name: String) -> [UInt8]? {
    FileSystem.readSmallFile("/proc/\(pid)/\(name)")
  }

  /// Sets a limit of the worker's (soft only: the hard limit stays as the worker set it, and its
  /// filter forbids raising either).
  func setLimit(_ resource: __rlimit_resource, _ value: UInt64) {
    _ = ak_set_limit(pid, Int32(resource.rawValue), value, ak_hard_limit(pid, Int32(resource.rawValue)))
  }

  /// Kills the worker now (`SIGKILL`); it is reaped in the background, so a large worker's
  /// teardown costs its caller nothing.
  func stop() {
    kill(pid, SIGKILL)
    close(socket)
    let pid = pid
    BackgroundWork.start("AttachmentKit.worker-reap", qos: .utility) {
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
  }

  /// Lets an idle worker go and waits for it: its socket closes, it reads the end and exits
  /// (after 1 s it is killed), and it is reaped here, so that a process that exits next counts
  /// its workers in its own resource use (`wait4` of its parent, GNU time's peak memory).
  func finish() {
    close(socket)
    var status: Int32 = 0
    // A worker exits within milliseconds of its socket closing (most of it the kernel freeing
    // its memory): polled from 0.2 ms, doubling to 10 ms, for a second at most.
    var pause: UInt32 = 200
    var waited: UInt32 = 0
    while waited < 1_000_000 {
      let result = waitpid(pid, &status, WNOHANG)
      if result == pid || (result < 0 && errno != EINTR) { return }
      usleep(pause)
      waited += pause
      pause = min(pause * 2, 10_000)
    }
    kill(pid, SIGKILL)
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
}

/// How a worker ended without answering.
struct WorkerDeath: Sendable {
  /// The wait status (`nil`: it could not be read).
  var status: Int32?
  /// The worker's peak resident memory, in bytes.
  var peakResidentBytes: Int64
  /// Its peak address space last seen while it ran, in bytes (0: never read).
  var peakAddressSpaceBytes: Int64 = 0

  /// The signal that killed it, if one did.
  var signal: Int32? {
    guard let status, status & 0x7f != 0, status & 0x7f != 0x7f else { return nil }
    return status & 0x7f
  }

  /// Why the rescue failed, for its refusal ("… Not rescued: …"), given the worker's ceiling.
  func reason(ceiling: Int64) -> String {
    guard let signal else {
      let code = status.map { ($0 >> 8) & 0xff }
      if code == WorkerMain.cannotConfine {
        return "its worker cannot confine itself (is libseccomp2 installed?), and does not run unconfined"
      }
      return "its worker exited\(code.map { " with status \($0)" } ?? "") before it answered"
    }
    let name = String(cString: strsignal(signal))
    if signal == SIGXCPU { return "\(RescueFallback.cpuExhausted) (its worker was killed: \(name))" }
    // Near the ceiling: the allocation that failed was most likely what killed it (the
    // address space is read every 50 ms, so the last reading trails the fatal one).
    if peakResidentBytes * 4 >= ceiling * 3 || peakAddressSpaceBytes * 10 >= ceiling * 9 {
      return
        "\(RescueFallback.memoryExhausted) (\(ceiling >> 20) MiB; \(RescueFallback.workerDied) \(signal): \(name))"
    }
    return "the decoder failed (\(RescueFallback.workerDied) \(signal): \(name))"
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
