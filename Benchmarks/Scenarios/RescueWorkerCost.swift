import AttachmentKit
import Glibc

/// Scenario 14: what a rescue worker costs (issues #36, #51). Every rescue runs in a worker
/// process of its own (one job, then it exits), confined for its job; a pool that has run a job
/// keeps a spare started ahead. Three ways are timed on the same 64×48 WebP in this process (the
/// benchmark is its own worker executable: `RescueWorkers.runIfRequested()` in its `main`),
/// alternating: a first job, which starts its worker (the idle workers are let go before it); a
/// later job, which takes the spare; and, for comparison, a job on a reused worker
/// (`jobsPerWorker` 100, the risk `--worker-jobs` accepts). Each way's CPU per job counts this
/// process and its reaped workers (`getrusage`), the spares' starts included.
enum RescueWorkerCostScenario {
  /// The report section.
  static let section = "14 rescue workers: first job, the spare's job, a reused worker's job"

  /// Runs the scenario.
  /// - Throws: ``BenchError`` when a rescue fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let source = RescueScenario.repositoryRoot() + "/Samples/media/webp-lossy.webp"
    let output = context.scratch + "/worker-cost.jpg"
    let judged = Result { () throws(Refusal) in try Validator().judge(file: source) }
    guard case .failure(let refusal) = judged else { throw BenchError("\(source) is accepted as it is") }
    var reusing = RescueConfiguration()
    reusing.workers.jobsPerWorker = 100
    let spared = ImageRescuer()
    let reused = ImageRescuer(configuration: reusing)
    func timed(_ rescuer: ImageRescuer) throws -> Double {
      let started = ContinuousClock.now
      do {
        _ = try rescuer.rescue(file: source, refusedWith: refusal, to: output, deadline: .now + .seconds(30))
      } catch {
        throw BenchError("rescue in a worker failed: \(error)")
      }
      return (ContinuousClock.now - started).inSeconds
    }
    var first: [Double] = []
    var spare: [Double] = []
    var reuse: [Double] = []
    var spareCPU = 0.0
    var reuseCPU = 0.0
    for _ in 0..<context.count(full: 9, quick: 5) {
      RescueWorkers.finishIdleWorkers()
      first.append(try timed(spared))
      let before = cpuSeconds()
      for _ in 0..<3 { spare.append(try timed(spared)) }
      RescueWorkers.finishIdleWorkers()
      let between = cpuSeconds()
      for _ in 0..<3 { reuse.append(try timed(reused)) }
      RescueWorkers.finishIdleWorkers()
      spareCPU += between - before
      reuseCPU += cpuSeconds() - between
    }
    RescueWorkers.finishIdleWorkers()
    report.add(
      section, "first job on a new worker (start, libvips load, confinement, job), median",
      key: "rescue_worker_first_ms", value: Distribution(seconds: first).percentile(50), unit: .milliseconds)
    report.add(
      section, "a later job, on the spare started ahead (a fresh process, confined for it), median",
      key: "rescue_worker_warm_ms", value: Distribution(seconds: spare).percentile(50), unit: .milliseconds)
    report.add(
      section, "the same job on a reused worker (--worker-jobs 100, no Landlock), median",
      key: "rescue_worker_reused_ms", value: Distribution(seconds: reuse).percentile(50), unit: .milliseconds)
    report.add(
      section, "CPU per later job with spares (this process and its workers)",
      key: "rescue_worker_cpu_spare_ms",
      value: spareCPU / Double(spare.count), unit: .milliseconds)
    report.add(
      section, "CPU per job on a reused worker", key: "rescue_worker_cpu_reused_ms",
      value: reuseCPU / Double(reuse.count), unit: .milliseconds)
  }

  /// User and system CPU of this process and its reaped children, in seconds.
  private static func cpuSeconds() -> Double {
    var total = 0.0
    for who in [RUSAGE_SELF, RUSAGE_CHILDREN] {
      var usage = rusage()
      getrusage(who.rawValue, &usage)
      total += usage.cpu.seconds
    }
    return total
  }
}
