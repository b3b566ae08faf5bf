import PosixLock

/// The cap on upstream fetches: at most `limit` distinct URLs in the pipeline at once. A
/// request for a URL already admitted joins it for free (the pipeline shares one fetch per
/// URL), so 200 requests for one new URL take one place. Nothing waits: over the cap the answer
/// is `503 overloaded` at once. Groups are keyed by the normalized URL's bytes (``URLBytes``).
final class FetchAdmission: Sendable {
  private struct Group {
    var members = 0
    /// Whether the fetch this group shares has been counted in the metrics.
    var counted = false
  }

  private let limit: Int
  private let groups = Locked<[URLBytes: Group]>([:])

  /// Admits at most `limit` distinct URLs at once.
  init(limit: Int) {
    self.limit = limit
  }

  /// Joins or opens the group for `url`; `false` when that would exceed the cap.
  func enter(_ url: URLBytes) -> Bool {
    groups.withLock { groups in
      if groups[url] != nil {
        groups[url]?.members += 1
        return true
      }
      guard groups.count < limit else { return false }
      groups[url] = Group(members: 1)
      return true
    }
  }

  /// Whether this is the first member of `url`'s group to report an upstream fetch (so it is
  /// counted once for all the requests that shared it).
  func claimUpstreamCount(_ url: URLBytes) -> Bool {
    groups.withLock { groups in
      guard let group = groups[url], !group.counted else { return false }
      groups[url]?.counted = true
      return true
    }
  }

  /// Leaves `url`'s group; the last member closes it.
  func leave(_ url: URLBytes) {
    groups.withLock { groups in
      guard let group = groups[url] else { return }
      if group.members <= 1 { groups[url] = nil } else { groups[url]?.members -= 1 }
    }
  }

  /// URLs in the pipeline now.
  var active: Int { groups.withLock { $0.count } }
}
