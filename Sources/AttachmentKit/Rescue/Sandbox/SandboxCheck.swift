import CWorkerIO
import Glibc

extension RescueWorkers {
  /// Checks the rescue workers' sandbox on this machine, as `attachkit sandbox` and
  /// `serve --rescue` do: starts workers through the pool, spawned and confined as a rescue's
  /// are; reads the layers in force from outside an image rescue's worker (`/proc/WORKER/status`,
  /// `stat`, `limits`, `ns/*`); and tries every ``SandboxProbe`` from inside a worker of its own
  /// (one that loads no library, but for a probe whose rule depends on one: a probe the seccomp
  /// filter refuses kills its worker), against a buffer, a descriptor and a key file of this
  /// process's. Takes about a third of a second.
  /// - Parameters:
  ///   - configuration: the workers' settings (``RescueWorkerConfiguration/jobsPerWorker``
  ///     above 1 drops two layers).
  ///   - keyFile: a file the probes try to read (serve's `--key-file`); `nil`: a mode-600 file
  ///     the check makes.
  /// - Returns: the report; a machine without a worker executable or where none starts has
  ///   ``SandboxReport/problem`` set.
  public static func sandboxReport(
    configuration: RescueWorkerConfiguration = RescueWorkerConfiguration(), keyFile: String? = nil
  ) -> SandboxReport {
    SandboxCheck(configuration: configuration, keyFile: keyFile).run()
  }
}

extension RescueWorkers {
  /// The sandbox layers the rescue workers this process has started so far run without, as
  /// their spawn and the kernel show them (namespaces, session, user, Landlock, the thread
  /// limit, one job per worker), in `SandboxLayer.allCases` order: what `fetch --rescue`,
  /// `rescue` and the extension runner warn about after a run. Empty when every such layer was
  /// in force, or no worker has started. It runs no probe (``sandboxReport(configuration:keyFile:)``
  /// does).
  public static func missingSandboxLayers() -> [SandboxLayer] {
    SpawnLayers.missingSoFar()
  }

  /// Whether this process runs under AddressSanitizer or ThreadSanitizer: its workers then run
  /// without Landlock and the seccomp allow-list (the sanitizer's runtime has threads and calls
  /// of its own), and `serve --rescue` starts as with `--rescue-sandbox degraded`.
  package static var underSanitizer: Bool { ak_under_sanitizer() != 0 }
}

/// One run of the sandbox check (see ``RescueWorkers/sandboxReport(configuration:keyFile:)``).
private struct SandboxCheck {
  let configuration: RescueWorkerConfiguration
  let keyFile: String?

  func run() -> SandboxReport {
    guard let scene = Scene(keyFile: keyFile) else {
      return failed("a temporary directory for the check cannot be made")
    }
    defer { scene.remove() }
    let pool = WorkerPool.pool(for: configuration, library: .libvips)
    var seen: Observation?
    let layerJob = scene.job(probe: 0)
    do {
      let outcome = try pool.attempt(scene.rescueJob, as: .probe(layerJob)) { worker in
        seen = Observation(of: worker)
      }
      guard case .replied(let reply) = outcome, let confinement = reply.confinement, var seen else {
        return failed("the checking worker did not answer: \(Self.describe(outcome))")
      }
      seen.confinement = confinement
      let probes = SandboxProbe.all.map {
        probe(WorkerPool.pool(for: configuration, library: $0.library), $0, scene)
      }
      return SandboxReport(layers: layers(seen), probes: probes + scene.aftermath(), problem: nil)
    } catch {
      return failed(error.message)
    }
  }

  /// Runs `probe` in a worker of its own.
  private func probe(_ pool: WorkerPool, _ probe: SandboxProbe, _ scene: Scene) -> SandboxReport.Probe {
    let outcome: WorkerProcess.Outcome
    do {
      outcome = try pool.attempt(scene.rescueJob, as: .probe(scene.job(probe: probe.number)))
    } catch {
      return SandboxReport.Probe(probe: probe, blocked: false, detail: "not tried: \(error.message)")
    }
    switch outcome {
    case .replied(let reply):
      guard let result = reply.probe else {
        return SandboxReport.Probe(probe: probe, blocked: false, detail: "no answer")
      }
      if result.allowed { return SandboxReport.Probe(probe: probe, blocked: false, detail: "ALLOWED") }
      return SandboxReport.Probe(
        probe: probe, blocked: true,
        detail: "\(Self.errnoName(result.error)): \(String(cString: strerror(result.error)))")
    case .died(let death) where death.signal == SIGSYS:
      return SandboxReport.Probe(probe: probe, blocked: true, detail: "killed by the seccomp filter (SIGSYS)")
    default:
      return SandboxReport.Probe(
        probe: probe, blocked: false, detail: "not judged: \(Self.describe(outcome))")
    }
  }

  /// The layers as seen.
  private func layers(_ seen: Observation) -> [SandboxReport.Layer] {
    SandboxLayer.allCases.map { layer in
      let (inForce, detail) = seen.state(of: layer, configuration: configuration)
      return SandboxReport.Layer(layer: layer, inForce: inForce, detail: detail)
    }
  }

  private func failed(_ problem: String) -> SandboxReport {
    SandboxReport(
      layers: SandboxLayer.allCases.map {
        SandboxReport.Layer(layer: $0, inForce: false, detail: "not checked")
      },
      probes: [], problem: problem)
  }

  static func describe(_ outcome: WorkerProcess.Outcome) -> String {
    switch outcome {
    case .replied: "it answered"
    case .stopped(let stop): "it was stopped (\(stop))"
    case .died(let death): death.ending(ceiling: 0).reason
    }
  }

  static func errnoName(_ error: Int32) -> String {
    switch error {
    case EPERM: "EPERM"
    case EACCES: "EACCES"
    case ESRCH: "ESRCH"
    case ENOENT: "ENOENT"
    case ENXIO: "ENXIO"
    case ENOTTY: "ENOTTY"
    case EINVAL: "EINVAL"
    case ENOSYS: "ENOSYS"
    case EAGAIN: "EAGAIN"
    case EBADF: "EBADF"
    case EISCONN: "EISCONN"
    case ECONNREFUSED: "ECONNREFUSED"
    case ENETUNREACH: "ENETUNREACH"
    case EROFS: "EROFS"
    default: "errno \(error)"
    }
  }
}

/// What the probes aim at, made in this process: a buffer, a descriptor only it holds, a key
/// file only its user may read, a directory anyone may write to, and counters of the signals a
/// probe might send it.
private final class Scene {
  let directory: String
  let keyPath: String
  let writePath: String
  let output: String
  let descriptor: Int32
  let canary: UnsafeMutablePointer<UInt8>
  static let canaryText = Array("CANARY-UNTOUCHED-BY-WORKERS".utf8)

  init?(keyFile: String?) {
    var template = Array("/tmp/attachkit-sandbox.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { return nil }
    directory = String(cString: made)
    let ownKey = directory + "/key"
    let key = open(ownKey, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard key >= 0 else { return nil }
    _ = "SECRET-KEY-MATERIAL".withCString { write(key, $0, strlen($0)) }
    close(key)
    keyPath = keyFile ?? ownKey
    _ = mkdir(directory + "/open", 0o777)
    _ = chmod(directory + "/open", 0o1777)
    writePath = directory + "/open/written-by-worker"
    output = directory + "/output"
    descriptor = open(ownKey, O_RDONLY | O_CLOEXEC)
    canary = .allocate(capacity: 64)
    canary.initialize(repeating: 0, count: 64)
    for (index, byte) in Self.canaryText.enumerated() { canary[index] = byte }
    _ = ak_signal_count_start(SIGUSR1)
    _ = ak_signal_count_start(SIGUSR2)
  }

  /// The rescue job a probe runs as: /dev/null in, a file of the check's out.
  var rescueJob: RescueJob {
    RescueJob(
      source: "/dev/null", bytes: 0,
      refusal: Refusal(AttachmentError(.ioError, "A sandbox probe."), facts: MediaFacts(bytes: 0)),
      output: output, limits: ValidationLimits(), deadline: .now + .seconds(10))
  }

  func job(probe: Int32) -> SandboxProbeJob {
    SandboxProbeJob(
      probe: probe, parentPID: getpid(), parentAddress: UInt64(UInt(bitPattern: canary)),
      parentDescriptor: descriptor, keyPath: keyPath, writePath: writePath)
  }

  /// What the parent saw of the probes: its buffer, the file a probe tried to create, the
  /// signals that arrived (each a probe of its own in the report).
  func aftermath() -> [SandboxReport.Probe] {
    let untouched = (0..<Self.canaryText.count).allSatisfy { canary[$0] == Self.canaryText[$0] }
    var facts = stat()
    let created = lstat(writePath, &facts) == 0
    let first = ak_signal_count_stop(SIGUSR1)
    let second = ak_signal_count_stop(SIGUSR2)
    func seen(_ name: String, _ attempt: String, _ blocked: Bool, _ detail: String) -> SandboxReport.Probe {
      SandboxReport.Probe(
        probe: SandboxProbe.observed(name, attempt), blocked: blocked, detail: blocked ? "unchanged" : detail)
    }
    return [
      seen("parent-memory-unchanged", "the parent's buffer read after every probe", untouched, "OVERWRITTEN"),
      seen(
        "no-file-created", "the directory anyone may write to, after every probe", !created, "a file appeared"
      ),
      seen(
        "no-signal-received", "SIGUSR1 and SIGUSR2 counted in the parent", first == 0 && second == 0,
        "\(first + second) arrived"),
    ]
  }

  func remove() {
    close(descriptor)
    canary.deallocate()
    _ = unlink(writePath)
    _ = rmdir(directory + "/open")
    _ = unlink(directory + "/key")
    _ = unlink(output)
    _ = rmdir(directory)
  }
}

/// A worker's layers as its parent sees them from outside.
private struct Observation {
  var namespaces: [String: Bool] = [:]
  var uid: Int64?
  var sessionLeader = false
  var hasTerminal = true
  var seccompMode: Int64?
  var noNewPrivileges = false
  var hardLimits: [String: String] = [:]
  var confinement = WorkerConfinement(landlockABI: 0, seccomp: false, threads: 0)

  init(of worker: WorkerProcess) {
    for name in ["user", "pid", "net", "ipc", "mnt"] {
      let own = Self.link("/proc/self/ns/\(name)")
      let its = Self.link("/proc/\(worker.pid)/ns/\(name)")
      namespaces[name] = own != nil && its != nil && own != its
    }
    if let status = FileSystem.readSmallFile("/proc/\(worker.pid)/status") {
      let text = String(decoding: status, as: UTF8.self)
      uid = ProcText.statusNumber("Uid", in: text)
      seccompMode = ProcText.statusNumber("Seccomp", in: text)
      noNewPrivileges = ProcText.statusNumber("NoNewPrivs", in: text) == 1
    }
    if let stat = FileSystem.readSmallFile("/proc/\(worker.pid)/stat") {
      let fields = ProcText.statFields(String(decoding: stat, as: UTF8.self))
      if fields.count > 4 {
        sessionLeader = Int32(fields[3]) == worker.pid
        hasTerminal = fields[4] != "0"
      }
    }
    if let limits = FileSystem.readSmallFile("/proc/\(worker.pid)/limits") {
      for line in String(decoding: limits, as: UTF8.self).split(separator: "\n") {
        let text = String(line)
        for name in [
          "Max cpu time", "Max file size", "Max processes", "Max open files", "Max core file size",
        ]
        where text.hasPrefix(name) {
          let columns = text.dropFirst(26).split(separator: " ")
          if columns.count > 1 { hardLimits[name] = String(columns[1]) }
        }
      }
    }
  }

  private static func link(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let length = readlink(path, &buffer, 255)
    guard length > 0 else { return nil }
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  func state(of layer: SandboxLayer, configuration: RescueWorkerConfiguration) -> (Bool, String) {
    func namespace(_ name: String) -> (Bool, String) {
      namespaces[name] == true ? (true, "its own") : (false, "shared with its parent")
    }
    func limit(_ name: String, _ judge: (String) -> Bool) -> (Bool, String) {
      guard let hard = hardLimits[name] else { return (false, "not read") }
      return (judge(hard), "hard \(hard)")
    }
    switch layer {
    case .seccompAllowList:
      let on = confinement.seccomp && seccompMode == 2 && noNewPrivileges
      return (
        on,
        on
          ? "default: kill the process; image workers may map anonymous memory executable (libvips' ORC)"
          : "Seccomp: \(seccompMode.map(String.init) ?? "?")"
      )
    case .everyThread:
      let on = confinement.seccomp && confinement.threads == 1
      return (on, "TSYNC; \(confinement.threads) thread(s) when confined")
    case .landlock:
      if confinement.landlockABI >= 1 {
        return (true, "ABI \(confinement.landlockABI): the job's two files only")
      }
      if configuration.jobsPerWorker > 1 {
        return (false, "off: a worker runs \(configuration.jobsPerWorker) jobs")
      }
      let abi = ak_landlock_abi()
      return (false, abi < 1 ? "this kernel offers none" : "not applied")
    case .userNamespace: return namespace("user")
    case .pidNamespace: return namespace("pid")
    case .networkNamespace: return namespace("net")
    case .ipcNamespace: return namespace("ipc")
    case .mountNamespace: return namespace("mnt")
    case .unprivilegedUser:
      guard let uid else { return (false, "not read") }
      return (uid != 0, "uid \(uid)")
    case .session:
      return (sessionLeader && !hasTerminal, sessionLeader ? "its own, no terminal" : "its parent's")
    case .parentUndumpable:
      let dumpable = ak_is_dumpable()
      return (dumpable == 0, "PR_GET_DUMPABLE \(dumpable)")
    case .cpuHardLimit, .fileSizeHardLimit:
      if configuration.jobsPerWorker > 1 {
        return (false, "soft only: a worker runs \(configuration.jobsPerWorker) jobs")
      }
      return limit(layer == .cpuHardLimit ? "Max cpu time" : "Max file size") { $0 != "unlimited" }
    case .processLimit: return limit("Max processes") { $0 != "unlimited" }
    case .descriptorLimit: return limit("Max open files") { (Int($0) ?? .max) <= 1024 }
    case .noCoreFile: return limit("Max core file size") { $0 == "0" }
    case .oneJobPerWorker:
      let jobs = max(1, configuration.jobsPerWorker)
      return (jobs == 1, jobs == 1 ? "then it exits; a warm spare takes the next" : "\(jobs) jobs a worker")
    }
  }
}

extension SandboxProbe {
  /// A check the parent makes after the probes (not run in a worker).
  static func observed(_ name: String, _ attempt: String) -> SandboxProbe {
    SandboxProbe(name: name, attempt: attempt, number: 0)
  }
}
