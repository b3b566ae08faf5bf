import CWorkerIO
import Glibc

/// A rescue worker's own side: its limits and filter, then one job at a time from its socket.
///
/// Started by ``WorkerPool`` with the socket as descriptor 3 and the options
/// `--memory BYTES --files N [--preload libvips|ffmpeg]`. Before it reads a job it sets its
/// own hard limits (no core file, `RLIMIT_AS` to the memory ceiling, `RLIMIT_NOFILE`) and
/// installs its seccomp filter (``ak_worker_confine``): from then on it can create no socket,
/// start no program and raise no limit. It exits when its parent closes the socket.
enum WorkerMain {
  /// The exit status of a worker that cannot install its filter (it runs no job unconfined).
  static let cannotConfine: Int32 = 70

  /// Runs the worker; returns its exit status (0 when the parent closed the socket, 64 for
  /// bad options, 70 when it cannot confine itself).
  static func run(arguments: [String]) -> Int32 {
    var memory: UInt64 = 0
    var files: UInt64 = 64
    var preload: WorkerLibrary?
    var index = 0
    while index + 1 < arguments.count {
      let value = arguments[index + 1]
      switch arguments[index] {
      case "--memory": memory = UInt64(value) ?? 0
      case "--files": files = UInt64(value) ?? 64
      case "--preload": preload = WorkerLibrary(rawValue: value)
      default:
        report("unknown option \(arguments[index])")
        return 64
      }
      index += 2
    }
    // A crash ends the worker at once, whatever handler a runtime installed: its parent reads
    // the signal from the wait status.
    for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] { signal(crash, SIG_DFL) }
    _ = ak_set_limit(0, Int32(RLIMIT_CORE.rawValue), 0, 0)
    if memory > 0, ak_under_sanitizer() == 0 {
      _ = ak_set_limit(0, Int32(RLIMIT_AS.rawValue), memory, memory)
    }
    _ = ak_set_limit(0, Int32(RLIMIT_NOFILE.rawValue), files, files)
    let confined = ak_worker_confine()
    guard confined == 0 else {
      report(
        confined == -ENOENT
          ? "libseccomp (libseccomp2) cannot be opened; a worker does not run unconfined"
          : "its seccomp filter cannot be installed: \(String(cString: strerror(-confined)))")
      return cannotConfine
    }
    switch preload {
    case .libvips: _ = Libvips.started(concurrency: RescueConfiguration().concurrency)
    case .ffmpeg: _ = Libav.shared
    case nil: break
    }
    if let preload { LibraryLog.capture(preload) }
    var buffer = [UInt8](repeating: 0, count: workerMessageLimit)
    while true {
      var source: Int32 = -1
      var output: Int32 = -1
      let length = buffer.withUnsafeMutableBytes {
        ak_receive_with_fds(AK_WORKER_SOCKET_FD, $0.baseAddress, $0.count, &source, &output)
      }
      if length == 0 { return 0 }  // the parent is gone or let this worker go
      if length < 0 { return length == -Int(EMSGSIZE) ? 65 : 0 }
      let reply = perform(Array(buffer[0..<length]), source: source, output: output, ceiling: memory)
      if source >= 0 { close(source) }
      if output >= 0 { close(output) }
      guard let message = WireCoding.encode(reply), message.count <= workerMessageLimit else { return 65 }
      let sent = message.withUnsafeBytes {
        ak_send_with_fds(AK_WORKER_SOCKET_FD, $0.baseAddress, $0.count, -1, -1)
      }
      if sent != 0 { return 0 }
    }
  }

  /// Runs one job (its source and output are the passed descriptors, opened by path through
  /// `/proc/self/fd`, so a library that reads options from a file name finds none). A failure
  /// the libraries report as an allocation that failed, or any failure of a job that took this
  /// worker's address space to within 10 % of its `RLIMIT_AS` (`ceiling` bytes: libraries
  /// report a failed allocation in their own words, x264 as "Generic error in an external
  /// library"), becomes the job's refusal with "it needed more memory than the rescue allows".
  private static func perform(_ bytes: [UInt8], source: Int32, output: Int32, ceiling: UInt64) -> WorkerReply
  {
    guard source >= 0, output >= 0, let job = WireCoding.decode(WorkerJob.self, from: bytes) else {
      return WorkerReply(
        error: WireError(AttachmentError(.ioError, "The rescue worker got a malformed job.")))
    }
    LibraryLog.capture(job.rescuer.library)
    var reply = run(job, source: source, output: output, ceiling: ceiling)
    let messages = LibraryLog.take()
    if !messages.isEmpty {
      reply.rescue?.warnings += messages
      reply.error = reply.error.map { $0.adding(messages) }
    }
    return reply
  }

  /// Runs `job` (see ``perform(_:source:output:ceiling:)``).
  private static func run(_ job: WorkerJob, source: Int32, output: Int32, ceiling: UInt64) -> WorkerReply {
    let deadline = job.secondsLeft.map { ContinuousClock.now + .nanoseconds(Int64(($0 * 1e9).rounded())) }
    let peakBefore = addressSpacePeak()
    let rescueJob = RescueJob(
      source: "/proc/self/fd/\(source)", bytes: job.bytes, refusal: job.refusal,
      output: "/proc/self/fd/\(output)", limits: job.limits, deadline: deadline)
    do throws(AttachmentError) {
      switch job.rescuer {
      case .image(let configuration, let limits):
        return WorkerReply(
          rescue: try ImageRescuer(configuration: configuration, limits: limits).convert(rescueJob))
      case .media(let configuration):
        return WorkerReply(rescue: try MediaRescuer(configuration: configuration).transcode(rescueJob))
      case .poster(let configuration):
        return WorkerReply(rescue: try PosterMaker(configuration: configuration).make(rescueJob))
      case .posterTime(let configuration):
        return WorkerReply(
          posterTime: try PosterMaker(configuration: configuration.search).firstBrightSeconds(
            rescueJob, window: configuration.searchSeconds))
      case .selfCheck:
        return WorkerReply(check: selfCheck())
      }
    } catch {
      let message = error.message.lowercased()
      let peak = addressSpacePeak()
      let nearCeiling = ceiling > 0 && peak > peakBefore && peak * 10 >= ceiling * 9
      // (a library that could not even be mapped under the ceiling reads as not installed)
      let loadFailure = SharedLibrary.lastFailure?.lowercased() ?? ""
      let allocationFailed =
        message.contains("cannot allocate memory") || message.contains("out of memory")
        || loadFailure.contains("cannot allocate memory") || loadFailure.contains("failed to map")
      if ceiling > 0, nearCeiling || allocationFailed {
        return WorkerReply(
          error: WireError(
            job.refusal.notRescued(
              "\(RescueFallback.memoryExhausted) (\(ceiling >> 20) MiB)")))
      }
      return WorkerReply(error: WireError(error))
    }
  }

  /// This process's peak address space in bytes (`VmPeak`); 0 when unknown.
  private static func addressSpacePeak() -> UInt64 {
    UInt64(max(0, WorkerProcess.statusFigure("VmPeak", of: "self") ?? 0))
  }

  /// What the worker's confinement lets it do, tried for real: open a network socket.
  private static func selfCheck() -> String {
    let failure = ak_try_network_socket()
    return "socket: " + (failure == 0 ? "allowed" : String(cString: strerror(failure)))
  }

  private static func report(_ message: String) {
    let line = "attachkit rescue worker: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
  }
}
