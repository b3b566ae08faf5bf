import AttachmentKit

/// Scenario 4b (issue 52): what authorizing a presigned URL costs. A cache with
/// `--cache-key-ignore preset:s3` rules holds one 1 KiB JPEG fetched with one signature; then
/// hits with that same URL alternate with the same hit in a cache without rules (the plain hit,
/// for comparison), and last each of a series of new signatures is confirmed with the origin
/// (one conditional request, a `304` from the server, the record refreshed).
enum HitConfirmationScenario {
  /// The report section.
  static let section = "4b presigned hit confirmation"

  /// Fetches the entry once, then times the three kinds of answer.
  /// - Throws: ``BenchError`` when an answer is not of its kind.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    var ruled = BenchContext.configuration(cacheDirectory: context.scratch + "/caches/confirm")
    ruled.cache.keyRules = try CacheKeyRules(["preset:s3"])
    let pipeline = try AttachmentPipeline(configuration: ruled)
    let plain = try context.makePipeline("confirm-plain")
    let base = context.server.url(ContentTree.hitPath(0))
    // Dated far ahead: an expired presigned URL is refused without a request.
    func signed(_ signature: String) -> String {
      base + "?X-Amz-Date=20991201T000000Z&X-Amz-Expires=60&X-Amz-Signature=\(signature)"
    }
    let first = try await pipeline.attachment(for: signed("first"), deadline: generousDeadline())
    guard first.source == .network else { throw BenchError("first confirmation fetch: \(first.source)") }
    _ = try await plain.attachment(for: base, deadline: generousDeadline())
    let iterations = context.count(full: 1_000, quick: 100)
    let warmUps = 10
    var same: [Duration] = []
    var confirmed: [Duration] = []
    var unruled: [Duration] = []
    // Hits with the entry's own URL, and plain hits, alternating (the record unchanged).
    for iteration in 0..<(warmUps + iterations) {
      let (sameTime, sameAnswer) = try await timed {
        try await pipeline.attachment(for: signed("first"), deadline: generousDeadline())
      }
      let (plainTime, plainAnswer) = try await timed {
        try await plain.attachment(for: base, deadline: generousDeadline())
      }
      guard sameAnswer.source == .cache, plainAnswer.source == .cache else {
        throw BenchError("confirmation: expected two hits, got \(sameAnswer.source), \(plainAnswer.source)")
      }
      if iteration >= warmUps {
        same.append(sameTime)
        unruled.append(plainTime)
      }
    }
    // A new signature every time (the memo remembers each one confirmed): one conditional
    // request each, and the record refreshed.
    for iteration in 0..<(warmUps + iterations) {
      let (newTime, newAnswer) = try await timed {
        try await pipeline.attachment(for: signed("s\(iteration)"), deadline: generousDeadline())
      }
      guard newAnswer.source != .cache else { throw BenchError("a new signature was not confirmed") }
      if iteration >= warmUps { confirmed.append(newTime) }
    }
    report.add(
      section, "hit, the URL the entry was fetched with (preset:s3)", key: "confirm_same_url", unit: .us,
      Distribution(same))
    report.add(
      section, "hit, another signature: confirmed (one conditional request)", key: "confirm_new_signature",
      unit: .us, Distribution(confirmed))
    report.add(
      section, "hit, a cache without key rules", key: "confirm_plain_hit", unit: .us, Distribution(unruled))
  }
}
