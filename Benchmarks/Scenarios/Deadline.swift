import AttachmentKit
import TestSupport

/// Scenario 7: how far past a 1 s deadline the pipeline answers, against the built-in
/// server's `/fault/never` (never answers) and `/fault/trickle` (one byte every 200 ms). Runs
/// go in concurrent groups of 10 to keep the total time down.
enum DeadlineScenario {
  /// The report section.
  static let section = "7 deadline precision"
  /// Calls in flight at once.
  static let groupSize = 10

  /// Measures the overshoot of every run, per fault and pooled.
  /// - Throws: ``BenchError`` when a run ends some other way than `deadline_exceeded`.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let faults = try TestHTTPServer.start(host: "127.0.0.1")
    defer { faults.stop() }
    let pipeline = try context.makePipeline("deadline")
    let runs = context.count(full: 50, quick: 10)
    var pooled: [Duration] = []
    for (key, path) in [("never", "/fault/never"), ("trickle", "/fault/trickle")] {
      var overshoots: [Duration] = []
      for group in stride(from: 0, to: runs, by: groupSize) {
        let width = min(groupSize, runs - group)
        let results = try await concurrently(count: width, width: width) { index in
          let url = faults.url(path) + "?i=\(group + index)"
          let deadline = ContinuousClock.now + .seconds(1)
          let outcome: Result<Attachment, AttachmentError>
          do throws(AttachmentError) {
            outcome = .success(try await pipeline.attachment(for: url, deadline: deadline))
          } catch {
            outcome = .failure(error)
          }
          let overshoot = ContinuousClock.now - deadline
          guard case .failure(let error) = outcome, error.code == .deadlineExceeded else {
            throw BenchError("\(path): expected deadline_exceeded, got \(outcome)")
          }
          return overshoot
        }
        overshoots += results
      }
      pooled += overshoots
      report.add(
        section, "overshoot past 1 s, /fault/\(key) (groups of \(groupSize))",
        key: "deadline_\(key)_overshoot", unit: .ms, Distribution(overshoots))
    }
    report.add(
      section, "overshoot past 1 s, both faults pooled", key: "deadline_overshoot", unit: .ms,
      Distribution(pooled))
  }
}
