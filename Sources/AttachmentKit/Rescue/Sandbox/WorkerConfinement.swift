import CWorkerIO
import Glibc

/// How a worker confined itself before its first job, as it reports it to its parent.
struct WorkerConfinement: Codable, Sendable, Equatable {
  /// The Landlock ABI its rules used; 0: no Landlock (the kernel has none, or the worker runs
  /// more than one job).
  var landlockABI: Int
  /// Whether its seccomp allow-list is installed (on every thread).
  var seccomp: Bool
  /// Its threads when it confined itself (1: every later thread inherits both layers).
  var threads: Int

  /// Confines the calling worker for a job whose files are `source` and `output`: Landlock
  /// (when `landlock`) granting those two files only, then the seccomp allow-list. Refuses
  /// (returns why) when the process has more than one thread (Landlock binds the calling
  /// thread and those it starts), or when the allow-list cannot be installed (`generatedCode`:
  /// anonymous executable memory allowed, for libvips' ORC): a worker runs no
  /// job unconfined. A kernel without Landlock leaves that layer out (the sandbox report names
  /// it).
  static func confine(
    source: Int32, output: Int32, landlock: Bool, generatedCode: Bool, status: ProcStatus
  ) -> Result<
    WorkerConfinement, WorkerConfinementFailure
  > {
    let threads = Int(status.figure("Threads") ?? 0)
    // A sanitizer's runtime runs threads of its own and makes calls the allow-list was not
    // measured for: a sanitizer build (a test build, never deployed) confines no further, and its
    // sandbox report says so.
    if ak_under_sanitizer() != 0 {
      return .success(WorkerConfinement(landlockABI: 0, seccomp: false, threads: threads))
    }
    guard threads == 1 else {
      return .failure(WorkerConfinementFailure(reason: "it has \(threads) threads, not 1, to confine"))
    }
    var abi: Int32 = 0
    if landlock {
      let restricted = ak_landlock_confine(source, output, &abi)
      if restricted != 0 && abi >= 1 {
        return .failure(
          WorkerConfinementFailure(reason: "Landlock: \(String(cString: strerror(-restricted)))"))
      }
      if restricted != 0 { abi = 0 }
    }
    let filtered = ak_seccomp_allow_list(generatedCode ? 1 : 0)
    guard filtered == 0 else {
      return .failure(
        WorkerConfinementFailure(
          reason: filtered == -ENOENT
            ? "libseccomp (libseccomp2) cannot be opened"
            : "its seccomp allow-list cannot be installed: \(String(cString: strerror(-filtered)))"))
    }
    return .success(
      WorkerConfinement(landlockABI: landlock ? Int(max(0, abi)) : 0, seccomp: true, threads: threads))
  }
}

/// Why a worker could not confine itself.
struct WorkerConfinementFailure: Error {
  var reason: String
}
