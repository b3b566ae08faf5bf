import Dispatch
import Glibc
import PosixLock

/// The object store as the cache's second tier: reads a key's record and content within a
/// bounded share of a request's deadline, verifying every byte against the record's SHA-256;
/// writes a published entry in the background (content first, then its record), retried or
/// dropped, never in an answer's way. Shared by a pipeline and its profiles' pipelines.
final class FleetStore: SharedTier {
  let configuration: StoreConfiguration
  let client: StoreClient
  private let state = Locked(State())
  private let writes = DispatchQueue(label: "AttachmentKit.store-writes", qos: .utility)

  private struct State {
    var counters = StoreCounters()
    var pending = 0
    /// Content names found corrupt: their next write replaces the object (no `If-None-Match`).
    var corruptContent: Set<String> = []
  }

  init(configuration: StoreConfiguration) {
    self.configuration = configuration
    client = StoreClient(configuration: configuration)
  }

  /// What happened so far.
  var counters: StoreCounters { state.withLock { $0.counters } }

  /// The name of `key`'s record: `records/` and the SHA-256 of its normalized text, the same on
  /// every machine (the local cache's keyed names are not).
  static func recordName(for key: URLKey) -> String? {
    TierKey(key).digest.map { "records/\($0)" }
  }

  /// The name of a content object.
  static func contentName(sha256: String, fileExtension: String) -> String {
    "content/\(sha256).\(fileExtension)"
  }

  /// The SHA-256 of `bytes` in hex, or `nil` when libcrypto failed.
  static func sha256(_ bytes: [UInt8]) -> String? {
    let hasher = SHA256Hasher()
    bytes.withUnsafeBytes { hasher.update($0) }
    return hasher.finalize()
  }

  func count(_ change: (inout StoreCounters) -> Void) { state.withLock { change(&$0.counters) } }

  /// Writes one line about the store on standard error, when the configuration asks for it.
  func log(_ message: String) {
    guard configuration.logsFailures else { return }
    let line = Array("attachkit: store \(configuration.location): \(message)\n".utf8)
    _ = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
  }

  /// Remembers that the content object `name` is corrupt, so that the next write replaces it.
  func markCorrupt(_ name: String) {
    state.withLock {
      $0.counters.corrupt += 1
      $0.corruptContent.insert(name)
    }
  }

  /// Whether `name` was found corrupt (and is not yet replaced).
  func isCorrupt(_ name: String) -> Bool { state.withLock { $0.corruptContent.contains(name) } }

  /// `name` was replaced by a write.
  func replaced(_ name: String) { _ = state.withLock { $0.corruptContent.remove(name) } }

  /// Runs `job` on the write queue unless too many writes wait already (then it is dropped and
  /// counted).
  func enqueue(_ what: String, _ job: @escaping @Sendable () -> Void) {
    let admitted = state.withLock { state -> Bool in
      guard state.pending < configuration.maximumPendingWrites else {
        state.counters.writesDropped += 1
        return false
      }
      state.pending += 1
      return true
    }
    guard admitted else {
      log("dropped the write of \(what): \(configuration.maximumPendingWrites) writes wait already")
      return
    }
    writes.async { [self] in
      job()
      state.withLock { $0.pending -= 1 }
    }
  }

  /// Background writes queued or running (tests wait for none).
  var pendingWrites: Int { state.withLock { $0.pending } }
}
