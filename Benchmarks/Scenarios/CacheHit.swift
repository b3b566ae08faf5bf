import AttachmentKit

/// Scenario 1: cache hits in process through `AttachmentPipeline`, over many distinct cached
/// URLs (1 KiB JPEGs, each its own content, and 5 MB WAVs).
enum CacheHitScenario {
  /// The report section.
  static let section = "1 cache hit"

  /// Populates two caches over the network, then times hits in shuffled rounds.
  /// - Throws: when an answer does not come from where it should.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let rounds = context.count(full: 10, quick: 3)
    let smallURLs = (0..<context.tree.hitFiles).map { context.server.url(ContentTree.hitPath($0)) }
    let small = try context.makePipeline("hit-small")
    try await populate(small, urls: smallURLs)
    log("populated \(smallURLs.count) small entries")
    let smallHits = try await measureHits(small, urls: smallURLs, rounds: rounds)
    report.add(
      section, "hit, 1 KiB JPEG, \(smallURLs.count) distinct URLs", key: "hit", unit: .us, smallHits)

    let largeCount = context.count(full: 1_000, quick: 50)
    let largeURLs = (0..<largeCount).map { context.server.url(ContentTree.hitLargePath, iteration: $0) }
    let large = try context.makePipeline("hit-large")
    try await populate(large, urls: largeURLs)
    log("populated \(largeCount) 5 MB entries")
    let largeHits = try await measureHits(large, urls: largeURLs, rounds: rounds)
    report.add(
      section, "hit, 5 MB WAV, \(largeCount) distinct URLs", key: "hit_5m", unit: .us, largeHits)
  }

  /// Downloads every URL once (4 at a time), checking each came from the network.
  /// - Throws: ``BenchError`` or `AttachmentError` when a download fails.
  static func populate(_ pipeline: AttachmentPipeline, urls: [String]) async throws {
    _ = try await concurrently(count: urls.count, width: 4) { index in
      let attachment = try await pipeline.attachment(for: urls[index], deadline: generousDeadline())
      guard attachment.source == .network else {
        throw BenchError("populating \(urls[index]) answered from \(attachment.source)")
      }
    }
  }

  /// One unrecorded warm-up round, then `rounds` rounds over the URLs in shuffled order, each
  /// call timed on its own.
  /// - Throws: ``BenchError`` when an answer is not a cache hit.
  static func measureHits(
    _ pipeline: AttachmentPipeline, urls: [String], rounds: Int
  ) async throws -> Distribution {
    var samples: [Duration] = []
    samples.reserveCapacity(urls.count * rounds)
    for round in 0...rounds {
      for url in shuffled(urls, seed: UInt64(round + 1)) {
        let start = ContinuousClock.now
        let attachment = try await pipeline.attachment(for: url, deadline: generousDeadline())
        let elapsed = ContinuousClock.now - start
        guard attachment.source == .cache else {
          throw BenchError("expected a cache hit for \(url), got \(attachment.source)")
        }
        if round > 0 { samples.append(elapsed) }
      }
    }
    return Distribution(samples)
  }
}
