import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Foundation's `URLSession` (swift-corelibs-foundation on Linux) downloading to a file: the
/// comparison for the cold-download scenario. One session for the whole run, so it reuses
/// connections like the pipeline does; no URL cache.
final class URLSessionClient: Sendable {
  private let session: URLSession
  private let directory: String

  /// Makes an ephemeral session whose downloads are moved into `directory`.
  init(directory: String) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    configuration.httpMaximumConnectionsPerHost = 16
    session = URLSession(configuration: configuration)
    self.directory = directory
  }

  /// Downloads `url` to a temporary file, moves it to `directory/name` when that is on the
  /// same file system, and returns its size.
  /// - Throws: ``BenchError`` on a transport error, a non-200 status or a missing file.
  func download(_ url: String, name: String) async throws -> Int64 {
    guard let target = URL(string: url) else { throw BenchError("bad URL \(url)") }
    let destination = directory + "/" + name
    return try await withCheckedThrowingContinuation { continuation in
      let task = session.downloadTask(with: target) { location, response, error in
        if let error {
          continuation.resume(throwing: BenchError("URLSession: \(error)"))
          return
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let location else {
          continuation.resume(throwing: BenchError("URLSession: status \(status) for \(url)"))
          return
        }
        guard let size = Files.size(location.path) else {
          continuation.resume(throwing: BenchError("URLSession: no file at \(location.path)"))
          return
        }
        // Keep it, as the pipeline keeps its file (a rename on the same file system; across
        // file systems it is left for URLSession to delete).
        _ = rename(location.path, destination)
        continuation.resume(returning: size)
      }
      task.resume()
    }
  }

  /// Ends the session.
  func invalidate() { session.invalidateAndCancel() }
}
