import AttachmentKit
import Glibc

/// The routes an operator's tools ask: `/metrics` and `/readyz` (`/healthz` needs no code).
extension AttachmentServer {
  /// `GET /metrics`: the request, upstream, cache and process metrics.
  func metricsReply() -> Reply {
    let text =
      metrics.text + cacheGauges.text(pipeline.cache) + ProcessMetrics.text(version: configuration.version)
      + ProcessMetrics.sandboxText(configuration.sandboxLayers)
      + ProcessMetrics.workerJobsText() + StoreMetrics.text(pipeline.storeCounters)
    return .text(200, text, contentType: "text/plain; version=0.0.4; charset=utf-8", outcome: "ok")
  }

  /// `GET /readyz`: `200 ready` when the cache directory is a directory this process can write
  /// into and a signing key is loaded (or unsigned URLs are accepted); else `503` naming what is
  /// not. `/healthz` only says the process answers.
  func readinessReply() -> Reply {
    var problems: [String] = []
    let directory = pipeline.configuration.cache.directory
    var info = stat()
    if stat(directory, &info) != 0 || info.st_mode & S_IFMT != S_IFDIR || access(directory, W_OK | X_OK) != 0
    {
      problems.append("the cache directory is not a directory this process can write into")
    }
    if signer.keys.isEmpty && !configuration.acceptsUnsigned { problems.append("no signing key is loaded") }
    guard problems.isEmpty else {
      return .text(
        503, "not ready: " + problems.joined(separator: "; ") + "\n",
        contentType: "text/plain; charset=utf-8",
        outcome: "not_ready")
    }
    return .text(200, "ready\n", contentType: "text/plain; charset=utf-8", outcome: "ok")
  }
}
