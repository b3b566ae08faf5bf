import Glibc
import TestSupport

/// Runs child processes with `posix_spawnp` (no shell, little overhead, so timing a `curl`
/// run measures curl and not the launcher).
enum Subprocess {
  /// What a finished child left: its exit status and, when captured, its standard output.
  struct Outcome {
    /// The exit code, or 128 + signal number when a signal ended it.
    var status: Int32
    /// Standard output, when asked for (empty otherwise).
    var output: [UInt8]
  }

  /// Starts `arguments` (the first one looked up in `PATH`) and returns its process id.
  /// Standard output goes to `outputDescriptor` when given, and standard error too when
  /// `mergeErrors` is set (else it is inherited).
  /// - Throws: ``BenchError`` when the process cannot start.
  static func spawn(
    _ arguments: [String], outputDescriptor: Int32? = nil, mergeErrors: Bool = false
  ) throws -> pid_t {
    switch CleanSpawn.start(arguments, output: outputDescriptor, mergeErrors: mergeErrors) {
    case .success(let pid): return pid
    case .failure(let failure):
      throw BenchError("cannot start \(arguments.first ?? "nothing"): \(failure.message)")
    }
  }

  /// What one timed run cost: wall time from start to exit, CPU time (user + system, the
  /// child's own threads), peak resident set in bytes, and the exit status.
  ///
  /// ``peakBytes`` from ``measure(_:outputDescriptor:)`` is only an upper bound: a child of
  /// `posix_spawn` shares this process's memory until its `exec` (vfork), and `exec` records
  /// that memory's high-water mark as the child's, so a child never reports less than the
  /// benchmark's own resident set. ``measurePeak(_:)`` gives the child's own.
  struct Measured {
    var wall: Duration
    var cpu: Duration
    var peakBytes: Double
    var status: Int32
  }

  /// Runs `arguments` to completion (output to `outputDescriptor` when given) and measures it
  /// with `wait4`'s resource usage.
  /// - Throws: ``BenchError`` when the process cannot start or cannot be waited for.
  static func measure(_ arguments: [String], outputDescriptor: Int32? = nil) throws -> Measured {
    let start = ContinuousClock.now
    let pid = try spawn(arguments, outputDescriptor: outputDescriptor)
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
      guard errno == EINTR else { throw BenchError("wait4 failed for \(arguments[0])") }
    }
    let wall = ContinuousClock.now - start
    let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return Measured(
      wall: wall, cpu: usage.cpu,
      peakBytes: Double(usage.ru_maxrss) * 1024, status: code)
  }

  /// GNU time, the small process ``measurePeak(_:)`` runs a command under.
  static let gnuTime = "/usr/bin/time"

  /// Like ``measure(_:outputDescriptor:)``, with ``Measured/peakBytes`` the command's own peak
  /// resident set: GNU time (a few hundred KiB itself) forks and execs it and writes the
  /// peak it reaps to a file. Its own start adds about a millisecond to the wall time.
  /// - Throws: ``BenchError`` when GNU time is missing (`apt-get install time`), the process
  ///   cannot start, or its report cannot be read.
  static func measurePeak(_ arguments: [String]) throws -> Measured {
    guard access(gnuTime, X_OK) == 0 else {
      throw BenchError("GNU time is missing (apt-get install -y time): peak RSS cannot be measured")
    }
    var template = Array("/tmp/attachkit-bench-peak-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
      guard let base = buffer.baseAddress else { return -1 }
      return mkstemp(base)
    }
    guard descriptor >= 0 else { throw BenchError("mkstemp failed") }
    close(descriptor)
    let report = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { unlink(report) }
    var run = try measure([gnuTime, "-f", "%M", "-o", report] + arguments)
    let text = Files.read(report).map { String(decoding: $0, as: UTF8.self) } ?? ""
    // The last line is the figure (GNU time puts "Command exited with non-zero status" first).
    guard let kibibytes = text.split(separator: "\n").last.flatMap({ Double($0) }) else {
      throw BenchError("GNU time wrote no peak for \(arguments.first ?? "nothing")")
    }
    run.peakBytes = kibibytes * 1024
    return run
  }

  /// Waits for `pid` to end and returns its status (exit code, or 128 + signal).
  static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR { return -1 }
    }
    if status & 0x7F == 0 { return (status >> 8) & 0xFF }
    return 128 + (status & 0x7F)
  }

  /// Runs `arguments` to completion, optionally capturing standard output (at most 1 MiB),
  /// and standard error with it when `mergeErrors` is set.
  /// - Throws: ``BenchError`` when the process cannot start.
  static func run(
    _ arguments: [String], captureOutput: Bool = false, mergeErrors: Bool = false
  ) throws -> Outcome {
    guard captureOutput else {
      return Outcome(status: wait(try spawn(arguments)), output: [])
    }
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw BenchError("pipe failed") }
    _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    let pid: pid_t
    do {
      pid = try spawn(arguments, outputDescriptor: fds[1], mergeErrors: mergeErrors)
    } catch {
      close(fds[0])
      close(fds[1])
      throw error
    }
    close(fds[1])
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while output.count < 1 << 20 {
      let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      output += buffer[0..<count]
    }
    close(fds[0])
    return Outcome(status: wait(pid), output: output)
  }

  /// The first line of `arguments`' output (standard error included), or `nil` when it
  /// cannot run.
  static func firstLine(of arguments: [String]) -> String? {
    guard let outcome = try? run(arguments, captureOutput: true, mergeErrors: true),
      outcome.status == 0
    else {
      return nil
    }
    let text = String(decoding: outcome.output, as: UTF8.self)
    return text.split(separator: "\n").first.map(String.init)
  }
}

extension rusage {
  /// The user and system CPU time together.
  var cpu: Duration {
    .seconds(ru_utime.tv_sec) + .microseconds(ru_utime.tv_usec) + .seconds(ru_stime.tv_sec)
      + .microseconds(ru_stime.tv_usec)
  }
}
