/// The decisions of one cache miss, as a value: told what happened, it answers with the next
/// ``Action``, and its owner (``AttachmentPipeline``) does the I/O. No socket, file or clock
/// is touched here, so every transition is a value test (`MissMachineTests`); the shape is
/// that of ``ResponseStateMachine`` and of async-http-client's transaction state machine.
///
/// One miss goes: download (conditional on a stale copy's validators) → on `304`, refresh
/// the stale copy → otherwise check the complete body → rescue a refusal a rescuer can undo
/// → publish → answer. A failed fetch may be answered with the stale copy instead
/// (stale-if-error), and a stale copy removed while it was revalidated is fetched again
/// unconditionally, within the same deadline.
///
/// The rescuers of a refusal are chosen once, when the check answers: every rescuer that can
/// undo it, in the configuration's order. The first runs; when it fails (for any reason but
/// the deadline or the caller leaving), the next is tried on the same source. A miss that must
/// stop (its deadline passed, its caller left) is told so by ``stopped(_:)``, an event of its
/// own, between any two steps.
struct MissMachine: Sendable {
  /// Where the miss is.
  enum State: Equatable, Sendable {
    /// Nothing has happened yet.
    case idle
    /// The transfer runs (conditional when a stale copy is revalidated).
    case downloading(conditional: Bool)
    /// A `304` confirmed the stale copy; its record is being refreshed.
    case refreshing
    /// The complete-file checks run on the body.
    case checking
    /// A rescuer turns the refused body into an attachment.
    case rescuing
    /// A rescuer improves an accepted body (see ``Rescuer/improvement(for:)``); if it fails,
    /// the accepted body is delivered.
    case improving
    /// The delivered file is being published (or stashed, for `no-store`).
    case publishing
    /// An answer or a failure has been given; no event is expected.
    case finished
  }

  /// What the owner must do next.
  enum Action: Equatable, Sendable {
    /// Start the transfer, conditional on these validators when either is set.
    case download(ifNoneMatch: String?, ifModifiedSince: String?)
    /// The server confirmed the stale copy (`304`): refresh its record.
    case refresh(CacheEntry)
    /// The body is on disk: run the complete-file checks (off the cooperative pool).
    case check
    /// The checks refused the body with `refusal`, which the rescuer called `rescuer` undoes:
    /// rescue it, keeping the body for the next rescuer should this one fail.
    case rescue(rescuer: String, refusal: Refusal)
    /// The checks accepted the body, but the rescuer called `rescuer` improves it by undoing
    /// `refusal`: rescue it and keep the body, which is delivered if the rescue fails.
    case improve(rescuer: String, refusal: Refusal)
    /// The delivered file passed every check: publish it (stash it, for `no-store`).
    case publish
    /// Answer from a cache entry without new content: revalidated after a `304`, or a stale
    /// copy standing in for the fetch that failed with `staleBecause`.
    case answerFromCache(CacheEntry, source: Attachment.Source, staleBecause: AttachmentError?)
    /// Answer with the file just published (or stashed).
    case answerPublished
    /// Remove every file this miss holds and fail with the error.
    case fail(AttachmentError)
  }

  /// Where the miss is now.
  private(set) var state = State.idle
  /// The copy being revalidated (`nil`: an unconditional fetch).
  private(set) var stale: CacheEntry?
  /// The rescuers chosen for the refusal (or the improvements) under way and not yet tried, in
  /// order, each with the refusal it undoes.
  private var untried: [(rescuer: String, refusal: Refusal)] = []
  /// The first chosen rescuer's failure: the answer when every one fails.
  private var firstFailure: AttachmentError?
  private let policy: HitPolicy
  private let useStaleOnError: Bool

  /// A miss with `stale` as the copy to revalidate, judged by `policy` (the caller's hit
  /// policy, which also lists its rescuers).
  init(stale: CacheEntry?, policy: HitPolicy, useStaleOnError: Bool) {
    self.stale = stale
    self.policy = policy
    self.useStaleOnError = useStaleOnError
  }

  /// The first action: the download, conditional on the stale copy's validators (its ETag, or
  /// else its `Last-Modified`).
  mutating func start() -> Action {
    precondition(state == .idle, "a miss starts once")
    return download()
  }

  private mutating func download() -> Action {
    state = .downloading(conditional: stale != nil)
    let etag = stale?.record.etag
    return .download(ifNoneMatch: etag, ifModifiedSince: etag == nil ? stale?.record.lastModified : nil)
  }

  /// The transfer failed with `error`: the stale copy stands in when the caller allows it, the
  /// network failed (not the bytes), and the caller's policy would serve the copy.
  mutating func downloadFailed(_ error: AttachmentError) -> Action {
    precondition(isDownloading, "a download failed while none ran")
    state = .finished
    if useStaleOnError, error.kind == .fetch, let stale, case .serve = policy.verdict(on: stale.record) {
      return .answerFromCache(stale, source: .cache, staleBecause: error)
    }
    return .fail(error)
  }

  /// The transfer finished: `notModified` for a `304`, `hasBody` when a body file was written.
  mutating func downloaded(notModified: Bool, hasBody: Bool) -> Action {
    precondition(isDownloading, "a download finished while none ran")
    if notModified, let stale {
      state = .refreshing
      return .refresh(stale)
    }
    guard hasBody else {
      state = .finished
      return .fail(AttachmentError(.networkError, "The server answered 304 to an unconditional request."))
    }
    state = .checking
    return .check
  }

  /// The stale copy's record was refreshed (`entry`), found removed meanwhile (`nil`: fetch
  /// again, unconditionally), or could not be written.
  mutating func refreshed(_ result: Result<CacheEntry?, AttachmentError>) -> Action {
    precondition(state == .refreshing, "a refresh finished while none ran")
    switch result {
    case .failure(let error):
      state = .finished
      return .fail(error)
    case .success(nil):
      stale = nil
      return download()
    case .success(let entry?):
      state = .finished
      if case .refuse(let error) = policy.verdict(on: entry.record) { return .fail(error) }
      return .answerFromCache(entry, source: .revalidated, staleBecause: nil)
    }
  }

  /// The complete-file checks answered. An accepted file that a rescuer improves goes to the
  /// improvers; a refusal to the rescuers that can undo it (both chosen here, once).
  mutating func checked(_ result: Result<Validation, Refusal>) -> Action {
    precondition(state == .checking, "a check finished while none ran")
    switch result {
    case .success(let validation):
      let improvers = policy.rescuers.improvers(for: validation)
      guard let first = improvers.first else { return delivered() }
      state = .improving
      untried = improvers.dropFirst().map { ($0.rescuer.name, $0.refusal) }
      return .improve(rescuer: first.rescuer.name, refusal: first.refusal)
    case .failure(let refusal):
      let candidates = policy.rescuers.candidates(for: refusal).map(\.name)
      guard let first = candidates.first else {
        state = .finished
        return .fail(refusal.error)
      }
      state = .rescuing
      untried = candidates.dropFirst().map { ($0, refusal) }
      return .rescue(rescuer: first, refusal: refusal)
    }
  }

  /// A rescue answered: its output (checked again) is delivered. When it failed, the next
  /// chosen rescuer is tried, unless the failure was the deadline, the caller leaving, or a
  /// verdict on the source itself (``RescueFallback``); once none is left, the first rescuer's
  /// failure is the answer (after an improvement, the accepted original is delivered instead).
  mutating func rescued(_ result: Result<Validation, AttachmentError>) -> Action {
    precondition(state == .rescuing || state == .improving, "a rescue finished while none ran")
    guard case .failure(let error) = result else { return delivered() }
    let stopping = error.isStop
    if firstFailure == nil { firstFailure = error }
    if RescueFallback.allowsNext(after: error), !untried.isEmpty {
      let next = untried.removeFirst()
      return state == .improving
        ? .improve(rescuer: next.rescuer, refusal: next.refusal)
        : .rescue(rescuer: next.rescuer, refusal: next.refusal)
    }
    if state == .improving, !stopping { return delivered() }
    state = .finished
    return .fail(stopping ? error : firstFailure ?? error)
  }

  /// The miss must stop (`reason`: its deadline passed, or its caller left) after the step
  /// under way: every file it holds is removed and nothing is published.
  mutating func stopped(_ reason: ProbeStop) -> Action {
    precondition(state != .idle && state != .finished, "a miss stopped before it started or after it ended")
    let doing =
      switch state {
      case .rescuing, .improving: "while the file was rescued"
      case .publishing: "while the file was published"
      default: "before the file was published"
      }
    state = .finished
    return .fail(StopSignal.error(for: reason, while: doing))
  }

  /// A file passed its checks: publish it.
  private mutating func delivered() -> Action {
    state = .publishing
    return .publish
  }

  /// Publishing (or stashing) answered.
  mutating func published(_ result: Result<Void, AttachmentError>) -> Action {
    precondition(state == .publishing, "a publish finished while none ran")
    state = .finished
    if case .failure(let error) = result { return .fail(error) }
    return .answerPublished
  }

  private var isDownloading: Bool {
    if case .downloading = state { return true }
    return false
  }
}
