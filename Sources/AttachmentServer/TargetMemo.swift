import AttachmentKit
import PosixLock

/// Request targets whose signature verified lately, with what they ask for, so that a target a
/// CDN asks for again costs neither its base64url decoding, an HMAC, a URL parse nor its logged
/// path: a hit's per-request work was a sixth of serve's CPU in these (perf under `wrk`).
///
/// Only a target that verified with the keys in use is kept, and ``forget()`` (a key reload)
/// empties the memo: a target remembered under a removed key is verified again, and refused.
/// At most ``capacity`` targets are kept, each at most ``longestTarget`` bytes long (a target is
/// a few hundred bytes; one of several kilobytes is verified every time instead), so the memo
/// holds a few megabytes at most; when full, it is emptied and fills again with the targets
/// asked for next.
final class TargetMemo: Sendable {
  /// What a verified target asks for.
  struct Entry: Sendable {
    /// The route (`attachment` or `info`, with its URL and signature).
    let route: Route
    /// The URL, checked.
    let url: AttachmentURL
    /// Which answer it ends in.
    let kind: ProxyRoute.Answer
    /// The path the access log shows (``LoggedPath``).
    let loggedPath: String
  }

  /// How many targets are kept at most.
  let capacity: Int
  /// The longest target kept, in bytes.
  static let longestTarget = 1_024
  private let state = Locked<(entries: [String: Entry], generation: UInt64)>(([:], 0))

  /// An empty memo of at most `capacity` targets.
  init(capacity: Int = 2_048) {
    self.capacity = capacity
  }

  /// What `target` (exactly as sent) asks for, if it verified under the keys in use.
  func entry(for target: String) -> Entry? {
    state.withLock { $0.entries[target] }
  }

  /// The keys' generation now: read before verifying, handed to ``remember(_:_:verifiedIn:)``.
  var generation: UInt64 { state.withLock { $0.generation } }

  /// Keeps `entry` for `target`, verified under the keys of `generation` (dropped when the keys
  /// were replaced meanwhile).
  func remember(_ target: String, _ entry: Entry, verifiedIn generation: UInt64) {
    guard capacity > 0, target.utf8.count <= Self.longestTarget else { return }
    state.withLock { state in
      guard state.generation == generation else { return }
      if state.entries.count >= capacity, state.entries[target] == nil {
        state.entries.removeAll(keepingCapacity: true)
      }
      state.entries[target] = entry
    }
  }

  /// Forgets every target (the keys were replaced): each is verified again when next asked for.
  func forget() {
    state.withLock { state in
      state.generation &+= 1
      state.entries.removeAll()
    }
  }
}
