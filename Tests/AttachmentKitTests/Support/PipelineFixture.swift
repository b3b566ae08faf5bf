import Foundation
import TestSupport

@testable import AttachmentKit

/// A loopback server, a fresh cache directory and a pipeline over them: what the pipeline's,
/// the rescue's and the stage tests start from.
struct PipelineFixture {
  let server: TestHTTPServer
  let scratch: ScratchDirectory
  let pipeline: AttachmentPipeline

  /// Private networks are allowed (the test server is on loopback); `configure` changes the
  /// rest; `observer` sees each miss's stages.
  init(
    _ label: String = "pipeline", configure: (inout PipelineConfiguration) -> Void = { _ in },
    observer: StageObserver? = nil
  ) throws {
    server = try TestHTTPServer.start()
    scratch = try ScratchDirectory(label)
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configure(&configuration)
    pipeline = try AttachmentPipeline(configuration: configuration, observer: observer)
  }

  func close() {
    server.stop()
    scratch.remove()
  }

  /// What requests left behind in the cache's temporary directory: the files there (named
  /// body files, rescue outputs, stashes) and, once the downloader has closed its own
  /// descriptor (``settledTemporaryFiles()``), this process's descriptors still open on it.
  /// Bodies are `O_TMPFILE`s, which no listing shows: a body never discarded after it was
  /// published, refused or abandoned keeps its descriptor (and disk blocks) and is found only
  /// here.
  func leftBehind() async -> [String] {
    temporaryFiles() + (await settledTemporaryFiles())
  }

  /// Files left in the cache's temporary directory (named body files, rescue outputs). Blind
  /// to anonymous body files: see ``leftBehind()``.
  func temporaryFiles() -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: scratch.path + "/cache/v3/tmp")) ?? []
  }

  /// This process's descriptors open on files in the cache's temporary directory, anonymous
  /// (`O_TMPFILE`) body files included: what a leak of a body or rescue output would leave.
  func openTemporaryFiles() -> [String] {
    let directory = scratch.path + "/cache/v3/tmp/"
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap {
      try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)
    }
    .filter { $0.hasPrefix(directory) }
  }

  /// ``openTemporaryFiles()`` once they are closed, or after 5 s: the downloader closes its
  /// own descriptor of a body on its engine thread, just after the answer (observed, bounded).
  func settledTemporaryFiles() async -> [String] {
    let bound = ContinuousClock.now + .seconds(5)
    while !openTemporaryFiles().isEmpty && ContinuousClock.now < bound {
      try? await Task.sleep(for: .milliseconds(5))
    }
    return openTemporaryFiles()
  }
}
