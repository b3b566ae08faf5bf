import CWorkerIO
import Glibc

/// A rescue worker's own side: its limits, its libraries, then its jobs from its socket, each
/// run confined.
///
/// Started by ``WorkerPool`` (in namespaces of its own, in a session of its own, as an
/// unprivileged user when the parent is root: see ``SpawnLayers``) with the socket as
/// descriptor 3 and the options `--memory BYTES --files N --jobs N --threads N --landlock 0|1
/// [--preload libvips|ffmpeg]`. Before it reads a job it sets its own hard limits (no core
/// file, `RLIMIT_AS` to the memory ceiling, `RLIMIT_NOFILE`, `RLIMIT_NPROC`), makes itself
/// undumpable, and loads its library and every module a job can need. When the first job
/// arrives, and before it reads a byte of it, it confines itself (``WorkerConfinement``):
/// Landlock grants the job's two files and nothing else, then the seccomp allow-list; from
/// then on it can reach nothing but its descriptors. After its last job it waits for its
/// parent to close the socket (so the parent can read its `/proc`), then exits.
enum WorkerMain {
  /// The exit status of a worker that cannot confine itself (it runs no job unconfined).
  static let cannotConfine: Int32 = 70
  /// The exit status of a worker whose output grew past its `RLIMIT_FSIZE` (SIGXFSZ, which the
  /// kernel does not deliver to its PID namespace's process 1 by default).
  static let outputTooLarge: Int32 = 71

  /// The worker's options.
  private struct Options {
    var memory: UInt64 = 0
    var files: UInt64 = 64
    var jobs = 1
    var threads: UInt64 = 0
    var landlock = true
    var preload: WorkerLibrary?

    /// Reads `--memory BYTES --files N --jobs N --threads N --landlock 0|1 --preload NAME`;
    /// `nil` (after reporting it) for an unknown option.
    init?(_ arguments: [String]) {
      var index = 0
      while index + 1 < arguments.count {
        let value = arguments[index + 1]
        switch arguments[index] {
        case "--memory": memory = UInt64(value) ?? 0
        case "--files": files = UInt64(value) ?? 64
        case "--jobs": jobs = max(1, Int(value) ?? 1)
        case "--threads": threads = UInt64(value) ?? 0
        case "--landlock": landlock = value != "0"
        case "--preload": preload = WorkerLibrary(rawValue: value)
        default:
          WorkerMain.report("unknown option \(arguments[index])")
          return nil
        }
        index += 2
      }
    }
  }

  /// Runs the worker; returns its exit status (0 when the parent closed the socket, 64 for
  /// bad options, 70 when it cannot confine itself).
  static func run(arguments: [String]) -> Int32 {
    guard let options = Options(arguments) else { return 64 }
    prepare(options)
    guard let status = ProcStatus() else {
      report("/proc/self/status cannot be opened")
      return cannotConfine
    }
    var confinement: WorkerConfinement?
    var buffer = [UInt8](repeating: 0, count: workerMessageLimit)
    for _ in 0..<options.jobs {
      var source: Int32 = -1
      var output: Int32 = -1
      let length = buffer.withUnsafeMutableBytes {
        ak_receive_with_fds(AK_WORKER_SOCKET_FD, $0.baseAddress, $0.count, &source, &output)
      }
      if length == 0 { return 0 }  // the parent is gone or let this worker go
      if length < 0 { return length == -Int(EMSGSIZE) ? 65 : 0 }
      if confinement == nil {
        switch WorkerConfinement.confine(
          source: source, output: output, landlock: options.landlock,
          generatedCode: options.preload == .libvips, status: status)
        {
        case .success(let confined): confinement = confined
        case .failure(let failure):
          report("it cannot confine itself: \(failure.reason); it runs no job unconfined")
          return cannotConfine
        }
      }
      var reply = perform(
        Array(buffer[0..<length]), source: source, output: output, ceiling: options.memory, status: status)
      reply.confinement = confinement
      if source >= 0 { close(source) }
      if output >= 0 { close(output) }
      guard let message = WireCoding.encode(reply), message.count <= workerMessageLimit else { return 65 }
      let sent = message.withUnsafeBytes {
        ak_send_with_fds(AK_WORKER_SOCKET_FD, $0.baseAddress, $0.count, -1, -1)
      }
      if sent != 0 { return 0 }
    }
    // Its last job done: it stays until the parent closes the socket (which can read its /proc).
    var source: Int32 = -1
    var output: Int32 = -1
    _ = buffer.withUnsafeMutableBytes {
      ak_receive_with_fds(AK_WORKER_SOCKET_FD, $0.baseAddress, $0.count, &source, &output)
    }
    return 0
  }

  /// What a worker does before it reads a job: crash signals that end it, its own hard limits,
  /// undumpable, libseccomp and its library loaded.
  private static func prepare(_ options: Options) {
    // A crash ends the worker at once, whatever handler a runtime installed: its parent reads
    // the signal from the wait status.
    for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] { signal(crash, SIG_DFL) }
    _ = ak_exit_on_signal(SIGXFSZ, outputTooLarge)
    _ = ak_set_limit(0, Int32(RLIMIT_CORE.rawValue), 0, 0)
    if options.memory > 0, ak_under_sanitizer() == 0 {
      _ = ak_set_limit(0, Int32(RLIMIT_AS.rawValue), options.memory, options.memory)
    }
    _ = ak_set_limit(0, Int32(RLIMIT_NOFILE.rawValue), options.files, options.files)
    if options.threads > 0 {
      _ = ak_set_limit(0, 6 /* RLIMIT_NPROC */, options.threads, options.threads)
    }
    _ = ak_make_undumpable()
    _ = ak_seccomp_preload()
    preload(options.preload)
  }

  /// Loads `library` and everything a job of it can need, before the worker confines itself:
  /// libvips with every module an allowed loader lives in (HEIF's, JPEG XL's), FFmpeg with the
  /// character-set converters its demuxers ask iconv for.
  private static func preload(_ library: WorkerLibrary?) {
    switch library {
    case .libvips:
      if let vips = Libvips.started(concurrency: RescueConfiguration().concurrency) {
        for module in ImageRescuer.modules { _ = vips.loadModule(module) }
      }
    case .ffmpeg:
      _ = Libav.shared
      // glibc's iconv loads a converter module on first use; the mpegts demuxer asks for ISO
      // 6937 (DVB service names), ID3 readers for UTF-16 and Latin-1.
      for from in ["ISO6937", "UTF-16", "UTF-16BE", "UTF-16LE", "ISO-8859-1"] {
        let converter = iconv_open("UTF-8", from)
        if converter != iconv_t(bitPattern: -1) { iconv_close(converter) }
      }
    case .bare, nil: break
    }
    if let library { LibraryLog.capture(library) }
  }

  /// Runs one job (its source and output are the passed descriptors, opened by path through
  /// `/proc/self/fd`, so a library that reads options from a file name finds none). A failure
  /// the libraries report as an allocation that failed, or any failure of a job that took this
  /// worker's address space to within 10 % of its `RLIMIT_AS` (`ceiling` bytes: libraries
  /// report a failed allocation in their own words, x264 as "Generic error in an external
  /// library"), becomes the job's refusal with "it needed more memory than the rescue allows".
  private static func perform(
    _ bytes: [UInt8], source: Int32, output: Int32, ceiling: UInt64, status: ProcStatus
  ) -> WorkerReply {
    guard source >= 0, output >= 0, let job = WireCoding.decode(WorkerJob.self, from: bytes) else {
      return WorkerReply(
        error: WireError(AttachmentError(.ioError, "The rescue worker got a malformed job.")))
    }
    LibraryLog.capture(job.rescuer.library)
    var reply = run(job, source: source, output: output, ceiling: ceiling, status: status)
    let messages = LibraryLog.take()
    if !messages.isEmpty {
      reply.rescue?.warnings += messages
      reply.error = reply.error.map { $0.adding(messages) }
    }
    return reply
  }

  /// Runs `job` (see ``perform(_:source:output:ceiling:status:)``).
  private static func run(
    _ job: WorkerJob, source: Int32, output: Int32, ceiling: UInt64, status: ProcStatus
  ) -> WorkerReply {
    let deadline = job.secondsLeft.map { ContinuousClock.now + .nanoseconds(Int64(($0 * 1e9).rounded())) }
    let peakBefore = addressSpacePeak(status)
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
      case .decodeCheck(let configuration):
        return try DecodeStart(configuration: configuration).reply(rescueJob)
      case .probe(let probe):
        return WorkerReply(probe: SandboxProbeOutcome.tried(probe))
      }
    } catch {
      let message = error.message.lowercased()
      let peak = addressSpacePeak(status)
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
              "\(RescueFallback.memoryExhausted) (\(ceiling >> 20) MiB)", verdict: .memoryExhausted)))
      }
      return WorkerReply(error: WireError(error))
    }
  }

  /// This process's peak address space in bytes (`VmPeak`); 0 when unknown.
  private static func addressSpacePeak(_ status: ProcStatus) -> UInt64 {
    UInt64(max(0, (status.figure("VmPeak") ?? 0) * 1024))
  }

  fileprivate static func report(_ message: String) {
    let line = "attachkit rescue worker: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
  }
}
