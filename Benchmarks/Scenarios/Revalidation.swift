import AttachmentKit

/// Scenario 4: one cached entry served with `Cache-Control: max-age=0` and an ETag, asked for
/// again and again: every answer is a conditional request, a `304`, a record refresh
/// (source `.revalidated`).
enum RevalidationScenario {
  /// The report section.
  static let section = "4 revalidation (304)"

  /// Fetches the entry once, then times the revalidations.
  /// - Throws: ``BenchError`` when an answer is not a revalidation.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let pipeline = try context.makePipeline("revalidate")
    let url = context.server.url(ContentTree.revalidatePath)
    let first = try await pipeline.attachment(for: url, deadline: generousDeadline())
    guard first.source == .network else { throw BenchError("first revalidation fetch: \(first.source)") }
    let iterations = context.count(full: 1_000, quick: 100)
    let warmUps = 10
    var samples: [Duration] = []
    for iteration in 0..<(warmUps + iterations) {
      let (elapsed, attachment) = try await timed {
        try await pipeline.attachment(for: url, deadline: generousDeadline())
      }
      guard attachment.source == .revalidated else {
        throw BenchError("expected a revalidation, got \(attachment.source)")
      }
      if iteration >= warmUps { samples.append(elapsed) }
    }
    report.add(
      section, "304 revalidation, 1 KiB JPEG (max-age=0, ETag)", key: "revalidate", unit: .us,
      Distribution(samples))
  }
}
