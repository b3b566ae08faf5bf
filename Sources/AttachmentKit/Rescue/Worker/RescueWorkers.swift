import Glibc
import PosixLock
import Synchronization

/// The entry point of rescue workers: the process-wide part of rescue isolation.
///
/// A program that embeds AttachmentKit and rescues files makes its own executable a worker by
/// calling ``runIfRequested()`` first thing in `main`: started as a worker (with
/// ``workerArgument``), the call runs the worker and never returns; otherwise it returns at
/// once and records that this executable can serve as its own worker. The alternative is an
/// `attachkit-rescue-worker` executable beside the program, or one named in
/// ``RescueWorkerConfiguration/executable``.
public enum RescueWorkers {
  /// The first argument that starts an executable as a rescue worker.
  public static let workerArgument = "--attachkit-rescue-worker"

  /// Runs this process as a rescue worker when it was started as one (its first argument is
  /// ``workerArgument``), and then exits without returning; otherwise returns at once. Call it
  /// first in `main`, before any other work.
  public static func runIfRequested() {
    let arguments = CommandLine.arguments
    if arguments.count > 1, arguments[1] == workerArgument {
      exit(WorkerMain.run(arguments: Array(arguments.dropFirst(2))))
    }
    selfHosting.store(true, ordering: .releasing)
  }

  /// Runs this process as a rescue worker (the dedicated worker executable's whole `main`),
  /// reading its options from the arguments after ``workerArgument``. Returns the exit status.
  public static func runWorker() -> Int32 {
    let arguments = CommandLine.arguments.dropFirst()
    return WorkerMain.run(
      arguments: Array(arguments.first == workerArgument ? arguments.dropFirst() : arguments))
  }

  /// Ends this process's idle rescue workers (they hold no job) and waits for them. Call it before a
  /// short-lived program exits (the command line does), so that no worker outlives it and its
  /// workers' resource use is counted in its own (`wait4`, GNU time). Without it, idle workers
  /// exit on their own when the process does (their socket closes). Workers busy with a job are
  /// left to it.
  public static func finishIdleWorkers() {
    WorkerPool.finishAll()
  }

  /// What a job given to a rescue worker does (``jobsRun()``); its raw value is the metric
  /// label serve uses (`attachkit_worker_jobs_total{job="media"}`).
  public enum JobKind: String, CaseIterable, Sendable {
    /// An image rescue (libvips).
    case image
    /// A media rescue (FFmpeg): a remux, a trim or a transcode.
    case media
    /// A video's poster frame.
    case poster
    /// The time of an accepted video's first frame that is not nearly black.
    case posterTime = "poster_time"
    /// An accepted file's decode check.
    case decodeCheck = "decode_check"
    /// One of the sandbox's probes (`attachkit sandbox`).
    case probe
  }

  /// The jobs this process gave its rescue workers so far, by kind (every kind present, 0 for
  /// none): a job is counted when a worker is sent it, whatever its answer. For operators and
  /// tests that count the work a process did (serve's `/metrics`).
  public static func jobsRun() -> [JobKind: Int] {
    jobCounts.withLock { counts in
      Dictionary(uniqueKeysWithValues: JobKind.allCases.map { ($0, counts[$0] ?? 0) })
    }
  }

  /// Counts one job of `kind` sent to a worker.
  static func countJob(_ kind: JobKind) { jobCounts.withLock { $0[kind, default: 0] += 1 } }

  private static let jobCounts = Locked<[JobKind: Int]>([:])

  /// Whether this executable serves as its own worker (``runIfRequested()`` was called).
  static let selfHosting = Atomic<Bool>(false)

  /// The executable a pool with `configuration` starts, or `nil` when there is none.
  static func executable(for configuration: RescueWorkerConfiguration) -> String? {
    if let executable = configuration.executable { return executable }
    guard let own = ownExecutable() else { return nil }
    if selfHosting.load(ordering: .acquiring) { return own }
    let directory = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(
      separator: "/")
    let sibling = directory + "/attachkit-rescue-worker"
    return access(sibling, X_OK) == 0 ? sibling : nil
  }

  /// The path of this process's executable (`/proc/self/exe`), or `nil`.
  private static func ownExecutable() -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    guard length > 0 else { return nil }
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Why no worker can start: the message of the refusal a rescue then gets.
  static let missingExecutable =
    "no rescue worker is available (call RescueWorkers.runIfRequested() at the top of main, install attachkit-rescue-worker beside the program, or set RescueWorkerConfiguration.executable)"
}
