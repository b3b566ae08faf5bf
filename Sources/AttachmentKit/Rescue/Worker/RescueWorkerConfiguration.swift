/// How rescues are isolated: the worker processes that run libvips and FFmpeg on untrusted
/// bytes, and the kernel limits each runs under.
///
/// Every rescue runs in a worker process (see ``RescueWorkers``): a crash, a memory bomb or a
/// decoder that will not stop costs one failed rescue, never the process that asked. Workers
/// with equal configurations share one pool per process.
public struct RescueWorkerConfiguration: Sendable, Hashable, Codable {
  /// The worker executable, or `nil` (the default) to choose one: this process's own
  /// executable when it called ``RescueWorkers/runIfRequested()`` at the top of its `main`,
  /// otherwise an `attachkit-rescue-worker` executable beside it (the package builds one).
  /// Without either, a rescue fails with a refusal that says so.
  public var executable: String?
  /// The most workers of each library (libvips for images, FFmpeg for video and audio) one
  /// process runs at once: more rescues at a time wait for a free worker until their own
  /// deadline. Default 2 (the CPU count of a small server; each
  /// transcode uses every core it is given). At least 1.
  public var poolSize: Int = 2
  /// Each worker's address-space ceiling (`RLIMIT_AS`), in bytes: an allocation past it
  /// fails in the worker, which fails that one rescue. Default 1 GiB: a 24-megapixel JPEG
  /// downscale peaks near 300 MiB of address space and a 720p transcode near 500 MiB. Not
  /// applied under AddressSanitizer or ThreadSanitizer (their shadow memory is address space).
  public var memoryCeilingBytes: Int64 = 1 << 30
  /// Each worker's open-descriptor limit (`RLIMIT_NOFILE`). Default 64.
  public var maximumOpenFiles: Int = 64
  /// A worker whose resident memory is over this after a job, in bytes, is retired (its
  /// memory goes back to the system) and a new one takes the next job. Default 256 MiB.
  public var retireAboveResidentBytes: Int64 = 256 << 20
  /// The jobs one worker runs before it exits. Default 1: a worker runs one job and exits, so a
  /// decoder an attacker took over never sees the next job (in `serve`, another caller's URL);
  /// the pool keeps a started worker ready (a warm spare), so a job does not wait for a start.
  /// More than 1 reuses workers at that risk, and without Landlock (its rules name the first
  /// job's files): ``SandboxLayer/landlock`` and ``SandboxLayer/oneJobPerWorker`` are then
  /// missing from the sandbox report. At least 1.
  public var jobsPerWorker: Int = 1
  /// The most threads a worker may run (`RLIMIT_NPROC`, counted in its own user namespace):
  /// past it, thread creation fails. Default 256 (a transcode on a large machine starts some
  /// dozens).
  public var maximumThreads: Int = 256

  /// The defaults above.
  public init() {}
}
