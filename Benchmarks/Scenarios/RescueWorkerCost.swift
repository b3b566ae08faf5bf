import AttachmentKit
import Glibc

/// Scenario 14: what a rescue worker costs (issue #36). Every rescue runs in a worker process;
/// a job on a pool with no worker pays for starting one (the process, its limits and filter,
/// libvips' load) and a job on a warm worker does not. Both are timed on the same 64×48 WebP
/// in this process (the benchmark is its own worker executable: `RescueWorkers.runIfRequested()`
/// in its `main`), alternating: the idle workers are let go before each first job.
enum RescueWorkerCostScenario {
  /// The report section.
  static let section = "14 rescue workers: first job vs warm job"

  /// Runs the scenario.
  /// - Throws: ``BenchError`` when a rescue fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let source = RescueScenario.repositoryRoot() + "/Samples/media/webp-lossy.webp"
    let output = context.scratch + "/worker-cost.jpg"
    let judged = Result { () throws(Refusal) in try Validator().judge(file: source) }
    guard case .failure(let refusal) = judged else { throw BenchError("\(source) is accepted as it is") }
    let rescuer = ImageRescuer()
    func timed() throws -> Double {
      let started = ContinuousClock.now
      do {
        _ = try rescuer.rescue(file: source, refusedWith: refusal, to: output, deadline: .now + .seconds(30))
      } catch {
        throw BenchError("rescue in a worker failed: \(error)")
      }
      return (ContinuousClock.now - started).inSeconds
    }
    var first: [Double] = []
    var warm: [Double] = []
    for _ in 0..<context.count(full: 9, quick: 5) {
      RescueWorkers.finishIdleWorkers()
      first.append(try timed())
      for _ in 0..<3 { warm.append(try timed()) }
    }
    RescueWorkers.finishIdleWorkers()
    let firstMedian = Distribution(seconds: first).percentile(50)
    let warmMedian = Distribution(seconds: warm).percentile(50)
    report.add(
      section, "first job on a new worker (start, libvips load, job), median", key: "rescue_worker_first_ms",
      value: firstMedian, unit: .milliseconds)
    report.add(
      section, "job on a warm worker, median", key: "rescue_worker_warm_ms", value: warmMedian,
      unit: .milliseconds)
  }
}
