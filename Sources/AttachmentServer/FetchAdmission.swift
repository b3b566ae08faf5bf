import AttachmentKit
import PosixLock

/// The cap on upstream fetches: at most `limit` distinct URLs in the pipeline at once. A
/// request for a URL already admitted joins it for free (the pipeline shares one fetch per
/// URL), so 200 requests for one new URL take one place. Nothing waits: over the cap the answer
/// is `503 overloaded` at once. Groups are keyed by the normalized URL's bytes (``URLKey``).
///
/// A group also knows its pipeline calls and how many of its requests still wait for an
/// answer, so that a drain can cancel the fetches nobody waits for (a request that gave up at
/// its own `X-Deadline-Ms` leaves its fetch running for the others and the cache).
final class FetchAdmission: Sendable {
  /// One request's pipeline call.
  typealias Work = Task<Result<Attachment, AttachmentError>, Never>

  private struct Group {
    var members = 0
    /// Members whose request has not been answered yet.
    var waiting = 0
    /// Whether the fetch this group shares has been counted in the metrics.
    var counted = false
    /// The members' pipeline calls, by request.
    var work: [UInt64: Work] = [:]
    /// Whether the drain cancelled them.
    var cancelled = false
  }

  private struct State {
    var groups: [URLKey: Group] = [:]
    var nextID: UInt64 = 0
  }

  private let limit: Int
  private let state = Locked(State())

  /// Admits at most `limit` distinct URLs at once.
  init(limit: Int) {
    self.limit = limit
  }

  /// Joins or opens the group for `url`, as a member that waits for its answer; `false` when
  /// that would exceed the cap.
  func enter(_ url: URLKey) -> Bool {
    state.withLock { state in
      if state.groups[url] != nil {
        state.groups[url]?.members += 1
        state.groups[url]?.waiting += 1
        return true
      }
      guard state.groups.count < limit else { return false }
      state.groups[url] = Group(members: 1, waiting: 1)
      return true
    }
  }

  /// A number for one member's pipeline call (``track(_:id:work:)``, ``leave(_:id:)``).
  func reserveID() -> UInt64 {
    state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
  }

  /// Records `work` as member `id`'s pipeline call (nothing when the group has closed already:
  /// the work ended).
  func track(_ url: URLKey, id: UInt64, work: Work) {
    state.withLock { state in
      guard state.groups[url] != nil else { return }
      if state.groups[url]?.cancelled == true { work.cancel() }
      state.groups[url]?.work[id] = work
    }
  }

  /// A member's request was answered (its work may go on, for the others and the cache).
  func answered(_ url: URLKey) {
    state.withLock { state in
      guard let group = state.groups[url], group.waiting > 0 else { return }
      state.groups[url]?.waiting -= 1
    }
  }

  /// A member's client hung up before its answer (``ClientWatch``): it no longer waits, and
  /// when no member waits any more the group's pipeline calls are cancelled (a download or a
  /// rescue nobody waits for stops; a rescue's worker is killed). Call instead of
  /// ``answered(_:)``, not as well. Returns whether the group was cancelled.
  @discardableResult
  func abandon(_ url: URLKey) -> Bool {
    state.withLock { state in
      guard let group = state.groups[url], group.waiting > 0 else { return false }
      state.groups[url]?.waiting -= 1
      guard group.waiting == 1, !group.cancelled else { return false }
      for work in group.work.values { work.cancel() }
      state.groups[url]?.cancelled = true
      return true
    }
  }

  /// Whether this is the first member of `url`'s group to report an upstream fetch (so it is
  /// counted once for all the requests that shared it).
  func claimUpstreamCount(_ url: URLKey) -> Bool {
    state.withLock { state in
      guard let group = state.groups[url], !group.counted else { return false }
      state.groups[url]?.counted = true
      return true
    }
  }

  /// Member `id`'s pipeline call ended; the last member closes the group.
  func leave(_ url: URLKey, id: UInt64) {
    state.withLock { state in
      guard let group = state.groups[url] else { return }
      if group.members <= 1 {
        state.groups[url] = nil
      } else {
        state.groups[url]?.members -= 1
        state.groups[url]?.work[id] = nil
      }
    }
  }

  /// Cancels the work of every group no request waits for (`all`: of every group); the number
  /// of groups newly cancelled.
  func cancel(all: Bool) -> Int {
    state.withLock { state in
      var cancelled = 0
      for (url, group) in state.groups where !group.cancelled && (all || group.waiting == 0) {
        for work in group.work.values { work.cancel() }
        state.groups[url]?.cancelled = true
        cancelled += 1
      }
      return cancelled
    }
  }

  /// URLs in the pipeline now.
  var active: Int { state.withLock { $0.groups.count } }
}
