import Foundation
import Synchronization
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Rescues run in worker processes (issue #36): each test uses a pool of its own (a worker
/// configuration no other test has, whose memory ceiling also names its workers in
/// `/proc/PID/cmdline`), and watches the real worker processes through `/proc`.
@Suite("Rescue: worker processes", .rescueTurn, .threadOfItsOwn)
struct RescueWorkerTests {
  /// A worker configuration of its own: its ceiling, 1 GiB plus a random number of MiB, is
  /// on its workers' command lines.
  static func uniqueWorkers() -> RescueWorkerConfiguration {
    var workers = RescueWorkerConfiguration()
    workers.memoryCeilingBytes = (1 << 30) + Int64.random(in: 1..<100_000) << 20
    return workers
  }

  /// The live (not zombie) worker processes started with `workers`' ceiling.
  static func workerPIDs(_ workers: RescueWorkerConfiguration) -> [Int32] {
    let wanted = "--memory\0\(workers.memoryCeilingBytes)\0"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.filter { pid in
      guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
        String(decoding: data, as: UTF8.self).contains(wanted)
      else { return false }
      return ProcStat.state(pid).map { $0 != "Z" } ?? false
    }
  }

  /// Waits (30 s at most) until `condition` holds, polling every 10 ms.
  static func eventually(_ condition: () -> Bool) async -> Bool {
    let start = ContinuousClock.now
    while ContinuousClock.now - start < .seconds(30) {
      if condition() { return true }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
  }

  /// Starts `job` with `rescuer` on a thread of its own and returns once its worker is seen
  /// spending CPU (over 0.3 s, from `/proc`): the rescue's answer to come, and the worker.
  static func underWay(
    _ job: RescueJob, rescuer: MediaRescuer
  ) async throws -> (answer: Task<Result<Rescue, AttachmentError>, Never>, worker: Int32) {
    let answer = Task {
      await onOwnThread { Result { () throws(AttachmentError) in try rescuer.rescue(job) } }
    }
    var pid: Int32?
    #expect(
      await eventually {
        pid = workerPIDs(rescuer.configuration.workers).first
        return pid.flatMap(ProcStat.cpuSeconds).map { $0 > 0.3 } ?? false
      }, "the transcode never started")
    return (answer, try #require(pid))
  }

  /// The 45 s 720p MPEG-4 AVI, refused, as a media rescue job into `output` with `deadline`.
  static func longTranscode(
    output: String, deadline: ContinuousClock.Instant, isCancelled: @escaping @Sendable () -> Bool = { false }
  ) async throws -> RescueJob {
    let source = try await LargeSamples.path("mpeg4-720p-45s.avi")
    let refusal = try #require(MediaRescuerTests.refusal(of: source))
    return RescueJob(
      source: source, bytes: MediaRescuerTests.size(source), refusal: refusal, output: output,
      limits: ValidationLimits(), deadline: deadline, isCancelled: isCancelled)
  }

  @Test(
    "a worker started for a job holds nothing of its parent's: standard streams on /dev/null, its socket at 3; its hard limits set"
  )
  func confined() async throws {
    let workers = Self.uniqueWorkers()
    let pool = WorkerPool.pool(for: workers, library: .libvips)
    defer { pool.retireIdle() }
    // Given a worker started as a rescue starts one (it waits for its job)
    await onOwnThread { pool.prestart() }
    let pid = try #require(Self.workerPIDs(workers).first, "no worker process found")
    // It holds nothing of its parent's: standard streams on /dev/null, its socket at 3, and
    // only what its own libraries opened past that (no pipe, socket or file of the parent's)
    let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap {
      Int($0)
    }
    .sorted()
    for descriptor in descriptors {
      let target =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)")) ?? "?"
      if descriptor < 3 { #expect(target == "/dev/null", "descriptor \(descriptor): \(target)") }
      if descriptor == 3 { #expect(target.hasPrefix("socket:"), "descriptor 3: \(target)") }
      if descriptor > 3 {
        #expect(
          !target.hasPrefix("pipe:") && !target.hasPrefix("socket:"), "descriptor \(descriptor): \(target)")
      }
    }
    // (its own hard limits, set before it loads its library)
    var limits = ""
    _ = await Self.eventually {
      limits = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
      return limits.contains("Max open files            64")
    }
    func limit(_ name: String) -> [Substring] {
      limits.split(separator: "\n").first { $0.hasPrefix(name) }.map {
        $0.dropFirst(name.count).split(separator: " ")
      } ?? []
    }
    #expect(limit("Max core file size").prefix(2) == ["0", "0"])
    #expect(limit("Max open files").prefix(2) == ["64", "64"])
    let ceiling = "\(workers.memoryCeilingBytes)"
    #expect(limit("Max address space").prefix(2) == [Substring(ceiling), Substring(ceiling)])
  }

  /// The libvips modules (`vips-modules-X.Y/vips-NAME.so`) mapped into process `pid`; `nil`
  /// until it has mapped libvips itself (a worker still loading).
  static func mappedModules(_ pid: Int32) -> Set<String>? {
    // Read to the end: /proc/PID/maps reports no size, and one read returns a page of it
    let data = FileHandle(forReadingAtPath: "/proc/\(pid)/maps").flatMap { try? $0.readToEnd() }
    let maps = String(decoding: data ?? Data(), as: UTF8.self)
    guard maps.contains("libvips.so") else { return nil }
    return Set(
      maps.split(separator: "\n").compactMap { line -> String? in
        guard line.contains("/vips-modules-"), let name = line.split(separator: "/").last else { return nil }
        return String(name)
      })
  }

  @Test(
    "as root, a worker whose executable lies in a directory only root may enter still starts: the parent opens it, the worker executes it by descriptor"
  )
  func executableBehindPrivateDirectory() async throws {
    guard geteuid() == 0 else {
      try Skips.skipRest("not root: workers keep this user, who reaches every path the parent does")
    }
    let scratch = try ScratchDirectory("worker-private-exe")
    defer { scratch.remove() }
    let installed = try #require(
      RescueWorkers.executable(for: RescueWorkerConfiguration()), "no worker binary")
    // A program under /root, or a build directory of mode 700 (the README's consumer package
    // under mktemp -d): root may enter it, the worker's unprivileged user may not.
    let directory = scratch.path + "/private"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    try #require(chmod(directory, 0o700) == 0)
    let copy = directory + "/attachkit-rescue-worker"
    try FileManager.default.copyItem(atPath: installed, toPath: copy)
    try #require(chmod(copy, 0o755) == 0)
    var configuration = RescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    configuration.workers.executable = copy
    configuration.workers.poolSize = 1
    let rescuer = ImageRescuer(configuration: configuration)
    defer { WorkerPool.pool(for: configuration.workers, library: .libvips).retireIdle() }
    let rescued = try await onOwnThread { () throws(AttachmentError) in
      try rescuer.attachment(
        fromFile: Samples.path("webp-lossy.webp"), rescuingInto: scratch.path + "/webp.out")
    }
    #expect(rescued.type == .jpeg && rescued.rescued != nil)
  }

  @Test(
    "an image worker loads HEIF's and JPEG XL's modules before it confines itself, and no other; each job a worker of its own"
  )
  func modulesOnDemand() async throws {
    let scratch = try ScratchDirectory("worker-modules")
    defer { scratch.remove() }
    var configuration = RescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    configuration.workers.poolSize = 1
    let rescuer = ImageRescuer(configuration: configuration)
    defer { WorkerPool.pool(for: configuration.workers, library: .libvips).retireIdle() }
    /// The sample `file` rescued into the scratch directory, on a thread of its own.
    func rescued(_ file: String) async throws -> Validation {
      try await onOwnThread { () throws(AttachmentError) in
        try rescuer.attachment(fromFile: Samples.path(file), rescuingInto: scratch.path + "/" + file + ".out")
      }
    }
    // A WebP (libvips' own loader), a HEIC and a JPEG XL (whose module holds an untrusted loader
    // the tables allow) all rescue: Landlock leaves no module path to load after confinement
    let webp = try await rescued("webp-lossy.webp")
    #expect(webp.type == .jpeg)
    let heic = try await rescued("heic-still.heic")
    #expect(heic.type == .jpeg && heic.width == 64)
    let jxl = try await rescued("jpegxl.jxl")
    #expect(jxl.type == .jpeg && jxl.width == 64)
    // The worker waiting for the next job (the warm spare) maps those two modules and none of
    // the others (ImageMagick's, poppler's, OpenSlide's)
    // (once the workers that ran the three jobs have exited: only the spare is left)
    let spare = WorkerPool.pool(for: configuration.workers, library: .libvips)
    #expect(
      await Self.eventually { spare.idleCount == 1 && Self.workerPIDs(configuration.workers).count == 1 })
    let pid = try #require(Self.workerPIDs(configuration.workers).first, "no worker process found")
    #expect(
      await Self.eventually { Self.mappedModules(pid) == ["vips-heif.so", "vips-jxl.so"] },
      "\(String(describing: Self.mappedModules(pid)))")
  }

  @Test(
    "a worker that dies mid-transcode: the caller gets the typed refusal, the worker is reaped, a new one takes the next job"
  )
  func crashIsOneFailedRescue() async throws {
    let scratch = try ScratchDirectory("worker-crash")
    defer { scratch.remove() }
    var configuration = MediaRescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    let rescuer = MediaRescuer(configuration: configuration)
    defer { WorkerPool.pool(for: configuration.workers, library: .ffmpeg).retireIdle() }
    let job = try await Self.longTranscode(output: scratch.path + "/out.mp4", deadline: .now + .seconds(60))

    // Given a 720p transcode under way in its worker (seen spending CPU)
    let (answer, worker) = try await Self.underWay(job, rescuer: rescuer)

    // When the worker dies of a signal (a decoder's crash; a worker is its PID namespace's
    // process 1, which ignores a SIGSEGV another process sends, so it is killed with SIGKILL,
    // the same death to its parent)
    kill(worker, SIGKILL)

    // Then the caller gets the source's refusal, with why it was not rescued
    guard case .failure(let error) = await answer.value else {
      Issue.record("the rescue succeeded after its worker died")
      return
    }
    #expect(error.code == job.refusal.error.code, "\(error)")
    #expect(
      error.message.contains("Not rescued: the decoder failed (its worker died of signal 9"),
      "\(error.message)")
    // and the dead worker was reaped (no zombie left)
    #expect(ProcStat.state(worker) == nil, "the dead worker is still in the process table")
    // and the next job is done by a new worker
    let next = RescueJob(
      source: Samples.path("webm-vp9.webm"), bytes: MediaRescuerTests.size(Samples.path("webm-vp9.webm")),
      refusal: try #require(MediaRescuerTests.refusal(of: Samples.path("webm-vp9.webm"))),
      output: scratch.path + "/next.mp4", limits: ValidationLimits(), deadline: .now + .seconds(30))
    let rescued = try await onOwnThread { () throws(AttachmentError) in try rescuer.rescue(next) }
    #expect(rescued.actions.contains(.transcoded))
    #expect(Self.workerPIDs(configuration.workers).allSatisfy { $0 != worker })
    #expect(try Validator().validate(file: scratch.path + "/next.mp4").type == .mp4)
  }

  @Test("a pool never runs more workers than its size: a busy worker is not doubled by an early start")
  func poolSizeBounds() async throws {
    let scratch = try ScratchDirectory("worker-bound")
    defer { scratch.remove() }
    var configuration = MediaRescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    configuration.workers.poolSize = 1
    let rescuer = MediaRescuer(configuration: configuration)
    let pool = WorkerPool.pool(for: configuration.workers, library: .ffmpeg)
    defer { pool.retireIdle() }
    let cancelled = Atomic<Bool>(false)
    let job = try await Self.longTranscode(
      output: scratch.path + "/out.mp4", deadline: .now + .seconds(60),
      isCancelled: { cancelled.load(ordering: .relaxed) })

    // Given a one-worker pool whose worker is transcoding (seen spending CPU)
    let (answer, _) = try await Self.underWay(job, rescuer: rescuer)

    // When the first bytes of other files call for a media rescue, again and again
    await onOwnThread { for _ in 0..<5 { pool.prestart() } }

    // Then no second worker was started: one worker process lives with the pool's settings
    #expect(Self.workerPIDs(configuration.workers).count == 1, "\(Self.workerPIDs(configuration.workers))")
    cancelled.store(true, ordering: .relaxed)
    _ = await answer.value
    // and once the job is over (its worker killed), an early start finds room again
    await onOwnThread { pool.prestart() }
    #expect(pool.idleCount == 1)
  }

  @Test(
    "a cancelled rescue kills its worker at once: the caller is answered cancelled, the worker gone within 0.5 s"
  )
  func cancellationKills() async throws {
    let scratch = try ScratchDirectory("worker-cancel")
    defer { scratch.remove() }
    var configuration = MediaRescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    let rescuer = MediaRescuer(configuration: configuration)
    let cancelled = Atomic<Bool>(false)
    let job = try await Self.longTranscode(
      output: scratch.path + "/out.mp4", deadline: .now + .seconds(60),
      isCancelled: { cancelled.load(ordering: .relaxed) })
    let (answer, worker) = try await Self.underWay(job, rescuer: rescuer)

    cancelled.store(true, ordering: .relaxed)
    let cancelledAt = ContinuousClock.now

    guard case .failure(let error) = await answer.value else {
      Issue.record("a cancelled rescue was delivered")
      return
    }
    #expect(error.code == .cancelled)
    // The worker is never seen running later than 0.5 s after the cancellation (judged by the
    // start of the last look that saw it: a late look on a loaded machine says nothing of it)
    var gone = false
    var lastSeenRunning = Duration.zero
    while !gone, ContinuousClock.now - cancelledAt < .seconds(5) {
      let looked = ContinuousClock.now - cancelledAt
      gone = ProcStat.state(worker).map { $0 == "Z" } ?? true
      if !gone {
        lastSeenRunning = looked
        try await Task.sleep(for: .milliseconds(5))
      }
    }
    #expect(
      gone && lastSeenRunning < .milliseconds(500),
      "the worker was seen running \(lastSeenRunning) after its caller cancelled")
  }

  @Test(
    "a transcode over its worker's memory ceiling is one failed rescue: the typed refusal, and the next job is done"
  )
  func memoryCeiling() async throws {
    let scratch = try ScratchDirectory("worker-ceiling")
    defer { scratch.remove() }
    // Given media workers held to 320 MiB of address space: a 720p transcode's worker reaches
    // about 490 MiB (VmPeak, measured), the libraries alone about 250 MiB
    var configuration = MediaRescueConfiguration()
    configuration.workers = Self.uniqueWorkers()
    configuration.workers.memoryCeilingBytes = 320 << 20
    let rescuer = MediaRescuer(configuration: configuration)
    defer { WorkerPool.pool(for: configuration.workers, library: .ffmpeg).retireIdle() }
    let job = try await Self.longTranscode(output: scratch.path + "/out.mp4", deadline: .now + .seconds(120))

    // When the 45 s 720p source is transcoded
    let answer = await onOwnThread { Result { () throws(AttachmentError) in try rescuer.rescue(job) } }

    // Then the caller gets the source's refusal, saying the memory ran out (whether an
    // allocation failed in FFmpeg or the worker died of it), and this process is unharmed
    guard case .failure(let error) = answer else {
      Issue.record("a transcode over the ceiling was delivered")
      return
    }
    #expect(error.code == job.refusal.error.code, "\(error)")
    #expect(error.message.contains("needed more memory than the rescue allows"), "\(error.message)")
    // and a small job still goes through a worker of the same pool
    let small = Samples.path("webm-vp9.webm")
    let next = RescueJob(
      source: small, bytes: MediaRescuerTests.size(small),
      refusal: try #require(MediaRescuerTests.refusal(of: small)),
      output: scratch.path + "/next.mp4", limits: ValidationLimits(), deadline: .now + .seconds(60))
    let rescued = try await onOwnThread { () throws(AttachmentError) in try rescuer.rescue(next) }
    #expect(rescued.actions.contains(.transcoded))
  }
}
