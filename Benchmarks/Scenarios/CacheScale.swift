import AttachmentKit
import Glibc

/// Scenario 9: a cache with 100,000 index entries (5,000 with `--quick`): hit latency, the
/// first hit of an entry not used for over a minute (which rewrites its record for LRU), and
/// the time of `verify()` and `collectGarbage()`.
///
/// The entries are made by fetching one real entry through the pipeline and storing copies
/// of it under other URLs with ``AttachmentCache/storeCopies(of:as:lastAccess:)`` (last used
/// long ago, all pointing at the same content), so the benchmark never clones the on-disk
/// format; publishing 100,000 bodies through the pipeline would take minutes. A copy is
/// checked to be served as a hit before anything is timed.
enum CacheScaleScenario {
  /// The report section.
  static let section = "9 cache scale"

  /// Builds the big index and times lookups and sweeps over it.
  /// - Throws: ``BenchError`` when cloned records are not recognised.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let entries = context.count(full: 100_000, quick: 5_000)
    let pipeline = try context.makePipeline("scale")
    let seedURL = context.server.url(ContentTree.hitPath(0), iteration: 0)
    _ = try await pipeline.attachment(for: seedURL, deadline: generousDeadline())
    let urls = (1...entries).map { context.server.url(ContentTree.hitPath(0), iteration: $0) }
    let (copyTime, stored) = try await timed {
      try pipeline.cache.storeCopies(of: seedURL, as: urls, lastAccess: 0)
    }
    guard stored == entries else { throw BenchError("stored \(stored) of \(entries) copies") }
    report.add(
      section, "store \(entries) index records with storeCopies (setup)", key: "scale_setup_ms",
      value: copyTime.seconds, unit: .milliseconds)
    let probe = try await pipeline.attachment(for: urls[0], deadline: generousDeadline())
    guard probe.source == .cache else {
      throw BenchError(
        "a stored copy was not served as a hit (\(probe.source))")
    }

    let sample = Array(
      shuffled(Array(urls.dropFirst()), seed: 42).prefix(context.count(full: 5_000, quick: 1_000)))
    report.add(
      section, "hit, first use in over 60 s (LRU record rewrite), \(entries) entries",
      key: "scale_hit_touch", unit: .us, try await hits(pipeline, sample))
    report.add(
      section, "hit, \(entries) entries", key: "scale_hit", unit: .us, try await hits(pipeline, sample))

    let sweeps = context.count(full: 3, quick: 1)
    var verifyTimes: [Duration] = []
    var gcTimes: [Duration] = []
    for _ in 0..<sweeps {
      let (verifyTime, verified) = try await timed { try pipeline.cache.verify() }
      let (gcTime, collected) = try await timed { try pipeline.cache.collectGarbage() }
      guard verified.entries == entries + 1, collected.entries == entries + 1 else {
        throw BenchError("sweeps saw \(verified.entries) / \(collected.entries) of \(entries + 1) entries")
      }
      verifyTimes.append(verifyTime)
      gcTimes.append(gcTime)
    }
    report.add(
      section, "verify(), \(entries) entries (rehash)", key: "scale_verify", unit: .ms,
      Distribution(verifyTimes))
    report.add(
      section, "collectGarbage(), \(entries) entries", key: "scale_gc", unit: .ms, Distribution(gcTimes))
  }

  /// Times one pipeline call per URL, each expected to be a hit.
  /// - Throws: ``BenchError`` when one is not.
  static func hits(_ pipeline: AttachmentPipeline, _ urls: [String]) async throws -> Distribution {
    var samples: [Duration] = []
    samples.reserveCapacity(urls.count)
    for url in urls {
      let (elapsed, attachment) = try await timed {
        try await pipeline.attachment(for: url, deadline: generousDeadline())
      }
      guard attachment.source == .cache else { throw BenchError("scale: \(url) was not a hit") }
      samples.append(elapsed)
    }
    return Distribution(samples)
  }
}
