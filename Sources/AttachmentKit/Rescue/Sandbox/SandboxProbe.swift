import CWorkerIO

/// One step an attacker with code execution in a decoder would take, tried from inside a
/// confined worker by ``RescueWorkers/sandboxReport(configuration:keyFile:)``.
public struct SandboxProbe: Sendable, Hashable, Codable {
  /// Its name in the report (`parent-memory`, `socket`, …).
  public var name: String
  /// What it tries, in words.
  public var attempt: String
  /// The probe's number in worker_probes.c.
  var number: Int32
  /// The library of the worker it runs in: none, but for a probe whose rule depends on the
  /// library (executable memory: FFmpeg's workers). The layers are read from a worker of the
  /// image rescue, libvips loaded, as a rescue starts it.
  var library: WorkerLibrary = .bare

  /// Every probe, in the order the report lists them.
  public static let all: [SandboxProbe] = [
    SandboxProbe(
      "parent-memory", "open /proc/PARENT/mem for writing and overwrite a buffer of the parent's",
      AK_PROBE_PARENT_MEMORY),
    SandboxProbe(
      "parent-descriptor", "pidfd_open the parent and pidfd_getfd a descriptor only it holds",
      AK_PROBE_PARENT_DESCRIPTOR),
    SandboxProbe(
      "key-file", "open and read a mode-600 file of the parent's user (serve's --key-file)", AK_PROBE_KEY_FILE
    ),
    SandboxProbe("system-file", "open and read /etc/passwd", AK_PROBE_SYSTEM_FILE),
    SandboxProbe(
      "write-file", "create and write a file in a directory anyone may write to", AK_PROBE_WRITE_FILE),
    SandboxProbe("signal-queue", "rt_sigqueueinfo SIGUSR1 to the parent", AK_PROBE_SIGNAL_QUEUE),
    SandboxProbe("pidfd-signal", "pidfd_send_signal SIGUSR2 to the parent", AK_PROBE_PIDFD_SIGNAL),
    SandboxProbe("kill", "kill the parent with SIGUSR1", AK_PROBE_KILL),
    SandboxProbe("tgkill", "tgkill the parent's main thread with SIGUSR1", AK_PROBE_TGKILL),
    SandboxProbe(
      "terminal", "TIOCSTI a character into /dev/tty and standard input, output, error", AK_PROBE_TERMINAL),
    SandboxProbe("execve", "execve /bin/true", AK_PROBE_EXECUTE),
    SandboxProbe("fork", "start a process (clone without CLONE_THREAD)", AK_PROBE_PROCESS),
    SandboxProbe("socket", "open a TCP socket", AK_PROBE_SOCKET),
    SandboxProbe("connect", "connect its socket to 127.0.0.1", AK_PROBE_CONNECT),
    SandboxProbe("ptrace", "PTRACE_ATTACH to the parent", AK_PROBE_PTRACE),
    SandboxProbe("process-vm-write", "process_vm_writev into the parent's buffer", AK_PROBE_PROCESS_MEMORY),
    SandboxProbe("unshare", "unshare a new user namespace", AK_PROBE_UNSHARE),
    SandboxProbe("mount", "mount a tmpfs on /tmp", AK_PROBE_MOUNT),
    SandboxProbe("raise-limit", "raise its CPU limit to unlimited", AK_PROBE_RAISE_LIMIT),
    SandboxProbe(
      "thread-socket", "open a TCP socket from a thread started after confinement", AK_PROBE_THREAD_SOCKET),
    SandboxProbe("bpf", "bpf", AK_PROBE_BPF),
    SandboxProbe("perf-event-open", "perf_event_open", AK_PROBE_PERF_EVENT_OPEN),
    SandboxProbe("io-uring-setup", "io_uring_setup", AK_PROBE_IO_URING),
    SandboxProbe("fsopen", "fsopen", AK_PROBE_FSOPEN),
    SandboxProbe("open-tree", "open_tree", AK_PROBE_OPEN_TREE),
    SandboxProbe("move-mount", "move_mount", AK_PROBE_MOVE_MOUNT),
    SandboxProbe("open-by-handle-at", "open_by_handle_at", AK_PROBE_OPEN_BY_HANDLE),
    SandboxProbe("delete-module", "delete_module", AK_PROBE_DELETE_MODULE),
    SandboxProbe("kexec-file-load", "kexec_file_load", AK_PROBE_KEXEC_FILE_LOAD),
    SandboxProbe("iopl", "iopl", AK_PROBE_IOPL),
    SandboxProbe(
      "executable-memory",
      "map memory writable and executable (code of its own), in an FFmpeg worker (an image worker may: libvips' ORC)",
      AK_PROBE_EXECUTABLE_MEMORY, library: .ffmpeg),
  ]

  private init(_ name: String, _ attempt: String, _ number: Int, library: WorkerLibrary = .bare) {
    self.init(name: name, attempt: attempt, number: Int32(number))
    self.library = library
  }

  init(name: String, attempt: String, number: Int32) {
    self.name = name
    self.attempt = attempt
    self.number = number
  }

  /// The probe named `name`, if there is one.
  public static func named(_ name: String) -> SandboxProbe? { all.first { $0.name == name } }
}

/// A probe job as it crosses to the worker: the probe and what it aims at.
struct SandboxProbeJob: Codable, Sendable {
  var probe: Int32
  var parentPID: Int32
  var parentAddress: UInt64
  var parentDescriptor: Int32
  var keyPath: String
  var writePath: String
}

/// What a probe found, as the worker answers it.
struct SandboxProbeOutcome: Codable, Sendable {
  /// Whether the attack got through.
  var allowed: Bool
  /// The errno it failed with (0 when allowed).
  var error: Int32
}

extension SandboxProbeOutcome {
  /// Tries `job`'s probe from this (confined) worker.
  static func tried(_ job: SandboxProbeJob) -> SandboxProbeOutcome {
    job.keyPath.withCString { key in
      job.writePath.withCString { write in
        var target = ak_probe_target(
          parent_pid: job.parentPID, parent_address: job.parentAddress, parent_fd: job.parentDescriptor,
          key_path: key, write_path: write)
        var error: Int32 = 0
        let result = ak_probe(job.probe, &target, &error)
        return SandboxProbeOutcome(allowed: result == Int32(AK_PROBE_ALLOWED), error: error)
      }
    }
  }
}
