/// One layer of a rescue worker's sandbox: what it stops is in docs/security.md.
public enum SandboxLayer: String, CaseIterable, Sendable, Codable {
  /// A seccomp-BPF allow-list: any system call not on it kills the worker.
  case seccompAllowList = "seccomp-allow-list"
  /// The filter installed on every thread of the worker (`SECCOMP_FILTER_FLAG_TSYNC`), and the
  /// worker confined while it has one thread.
  case everyThread = "seccomp-every-thread"
  /// Landlock: no path reachable but the job's own two files.
  case landlock
  /// A user namespace of its own.
  case userNamespace = "user-namespace"
  /// A PID namespace of its own: no other process visible.
  case pidNamespace = "pid-namespace"
  /// A network namespace of its own: no interface.
  case networkNamespace = "network-namespace"
  /// An IPC namespace of its own.
  case ipcNamespace = "ipc-namespace"
  /// A mount namespace of its own.
  case mountNamespace = "mount-namespace"
  /// Not root (a root parent's worker runs as an unprivileged user, with no supplementary group).
  case unprivilegedUser = "unprivileged-user"
  /// A session of its own: no controlling terminal.
  case session
  /// The parent undumpable: no process of its user reads or writes its memory or takes its
  /// descriptors.
  case parentUndumpable = "parent-undumpable"
  /// A hard `RLIMIT_CPU` (the kernel kills past it).
  case cpuHardLimit = "cpu-hard-limit"
  /// A hard `RLIMIT_FSIZE`.
  case fileSizeHardLimit = "file-size-hard-limit"
  /// `RLIMIT_NPROC` against thread bombs.
  case processLimit = "process-limit"
  /// A small hard `RLIMIT_NOFILE`.
  case descriptorLimit = "descriptor-limit"
  /// `RLIMIT_CORE` 0.
  case noCoreFile = "no-core-file"
  /// One job per worker: a compromised job never sees the next caller's.
  case oneJobPerWorker = "one-job-per-worker"
}
