import AttachmentKit

/// What every scenario shares: the options, the server, the files, and a scratch directory
/// in which each scenario makes its own caches.
struct BenchContext: Sendable {
  /// The command line.
  let options: Options
  /// The loopback server offering ``tree``.
  let server: any MediaServer
  /// The files served.
  let tree: ContentTree
  /// A private temporary directory, removed at the end.
  let scratch: String

  /// Whether this is a `--quick` run.
  var quick: Bool { options.quick }

  /// `full` in a full run, `quick` in a quick one.
  func count(full: Int, quick: Int) -> Int { options.quick ? quick : full }

  /// A pipeline over a fresh, empty cache directory named `name`.
  ///
  /// Loopback is allowed (`allowPrivateNetworks`: the server is on 127.0.0.1), audio may be
  /// up to 50 MB (the 45 MiB WAV bodies), and the automatic sweep is off
  /// (`sweepAfterBytes` 1 TiB) so a background sweep never lands inside a timed iteration;
  /// sweeps are timed on their own in the cache-scale scenario.
  /// - Throws: ``BenchError`` or `AttachmentError` when the cache cannot be made.
  func makePipeline(_ name: String) throws -> AttachmentPipeline {
    let directory = scratch + "/caches/" + name
    Files.removeTree(directory)
    try Files.makeDirectory(directory)
    return try AttachmentPipeline(configuration: Self.configuration(cacheDirectory: directory))
  }

  /// The pipeline configuration every scenario uses, over `cacheDirectory`.
  static func configuration(cacheDirectory: String) -> PipelineConfiguration {
    var configuration = PipelineConfiguration(cacheDirectory: cacheDirectory)
    configuration.downloader.allowPrivateNetworks = true
    configuration.limits.maximumAudioBytes = 50_000_000
    configuration.cache.sweepAfterBytes = 1 << 40
    return configuration
  }
}

/// A deadline far enough away that it never decides a benchmark iteration (60 s).
func generousDeadline() -> ContinuousClock.Instant { .now + .seconds(60) }
