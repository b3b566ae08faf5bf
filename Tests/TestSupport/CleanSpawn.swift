import Glibc

/// Starts child processes with `posix_spawnp`, an empty signal mask and default actions for
/// the signals that stop or interrupt them.
///
/// The threads that tests and benchmarks spawn from may block signals (libdispatch's pool
/// does) or ignore SIGPIPE (libcurl does), and a child inherits both: nginx, started that way,
/// would never see the SIGTERM that stops it. Shared by the serve tests and the benchmarks.
public enum CleanSpawn {
  /// Runs `arguments` to its end on a thread of its own (never on Swift's cooperative pool),
  /// its output inherited.
  /// - Returns: its exit status; 128 + the signal that ended it; 127 when it cannot start.
  public static func run(_ arguments: [String]) async -> Int32 {
    await onOwnThread { () -> Int32 in
      guard case .success(let pid) = start(arguments) else { return 127 }
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
  }

  /// Starts `arguments` (the first one looked up in `PATH`). Standard output goes to `output`
  /// when given, standard error too when `mergeErrors` is set; otherwise both are inherited.
  /// - Returns: the child's process id, or the `posix_spawnp` error number.
  public static func start(
    _ arguments: [String], output: Int32? = nil, mergeErrors: Bool = false
  ) -> Result<pid_t, SpawnFailure> {
    guard let program = arguments.first else { return .failure(SpawnFailure(code: EINVAL)) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let output {
      posix_spawn_file_actions_adddup2(&actions, output, 1)
      if mergeErrors { posix_spawn_file_actions_adddup2(&actions, output, 2) }
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
    argv.append(nil)
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let code = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
    return code == 0 ? .success(pid) : .failure(SpawnFailure(code: code))
  }

  /// Why a child could not start: the `posix_spawnp` error number.
  public struct SpawnFailure: Error {
    /// The error number (`errno` values).
    public let code: Int32
    /// Its text, from `strerror`.
    public var message: String { String(cString: strerror(code)) }
  }
}
