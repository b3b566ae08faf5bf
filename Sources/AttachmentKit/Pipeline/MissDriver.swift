/// The one owner of a ``MissMachine``: it performs every action the machine returns (download,
/// refresh, check, rescue, improve, publish, answer) and feeds each result back, until the
/// machine answers. Nothing else performs a miss's actions, and no action is refused here: the
/// machine's whole vocabulary has one performer each (the shape of async-http-client's
/// transaction, whose state machine's every action is run in one place).
///
/// Where an action runs is the action's business, not the loop's: the network actions run in
/// the request's task; the file-sized ones (the complete-file checks, a rescue, publishing) on
/// a thread of their own (``OffPoolWork``), under the request's deadline. The machine never
/// returns to the network once the body is checked, so a miss hops to that thread once: its
/// file actions run there back to back, then the answer is given in the task.
///
/// A driver is used by one thread at a time: the request's task, then the check thread while
/// the task awaits it (the continuation orders the two), then the task again.
final class MissDriver: @unchecked Sendable {
  private let pipeline: AttachmentPipeline
  private let url: AttachmentURL
  private let deadline: ContinuousClock.Instant
  private let start: ContinuousClock.Instant
  private let phase: FlightPhase
  private var machine: MissMachine
  /// The last transfer (the body's, or the `304` a refresh merges).
  private var fetched: AttachmentPipeline.Fetched?
  /// The file this miss still owns: the body, then a rescue's output; removed unless published.
  private var held: CacheBodyFile?
  /// The held file's validation, once it passed its checks.
  private var validation: Validation?
  /// Where the checked file went, once published.
  private var published: AttachmentPipeline.Published?

  /// A miss of `url` by `pipeline`, revalidating `stale` when set; `phase` is told where the miss
  /// is (``FlightPhase``); `confirming`: `stale` is a fresh copy the origin confirms for this
  /// caller's URL (``HitConfirmation``), which never stands in for the origin's refusal.
  init(
    pipeline: AttachmentPipeline, url: AttachmentURL, stale: CacheEntry?, deadline: ContinuousClock.Instant,
    start: ContinuousClock.Instant, phase: FlightPhase, confirming: Bool
  ) {
    self.pipeline = pipeline
    self.url = url
    self.deadline = deadline
    self.start = start
    self.phase = phase
    machine = MissMachine(
      stale: stale, policy: pipeline.hitPolicy,
      useStaleOnError: pipeline.configuration.useStaleOnError && !confirming)
  }

  /// Runs the miss to its answer; every file it made is published or removed by then.
  func run() async -> Result<Attachment, AttachmentError> {
    var action = machine.start()
    while true {
      switch action {
      case .download(let ifNoneMatch, let ifModifiedSince):
        action = await download(ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince)
      case .refresh(let entry):
        action = refresh(entry)
      case .check, .rescue, .improve, .publish:
        action = await OffPoolWork.run(deadline: deadline) { [self, action] signal in
          fileWork(from: action, signal: signal)
        }
      case .answerFromCache(let entry, let source, let staleBecause):
        return .success(answer(from: entry, source: source, staleBecause: staleBecause))
      case .answerPublished:
        guard let validation, let published, let fetched else {
          return .failure(AttachmentError(.ioError, "No published file to answer with."))
        }
        return .success(
          pipeline.answer(published, validation: validation, fetched: fetched, url: url, start: start))
      case .fail(let error):
        return .failure(error)
      }
    }
  }

  // MARK: The network's actions, in the request's task

  private func download(ifNoneMatch: String?, ifModifiedSince: String?) async -> MissMachine.Action {
    phase.enter("before the download finished")
    switch await pipeline.download(
      url, ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, deadline: deadline,
      counting: phase.receivedBytes)
    {
    case .failure(let error):
      return machine.downloadFailed(error)
    case .success(let transfer):
      fetched = transfer
      let next = machine.downloaded(
        notModified: transfer.download.isNotModified, hasBody: transfer.download.file != nil)
      if next == .check { held = transfer.body } else { transfer.body.discard() }
      return next
    }
  }

  private func refresh(_ entry: CacheEntry) -> MissMachine.Action {
    guard let fetched else {
      return machine.refreshed(.failure(AttachmentError(.networkError, "No response to refresh from.")))
    }
    let (validators, freshness) = pipeline.revalidated(entry, of: url, by: fetched)
    return machine.refreshed(
      Result { () throws(AttachmentError) in
        try pipeline.tier.refresh(entry, validators: validators, freshness: freshness, now: fetched.now)
      })
  }

  private func answer(
    from entry: CacheEntry, source: Attachment.Source, staleBecause: AttachmentError?
  ) -> Attachment {
    var attachment = pipeline.answer(entry, url: url, source: source, start: start)
    if source == .revalidated { attachment.transferTimings = fetched?.download.timings }
    if let staleBecause {
      attachment.isStale = true
      attachment.validation.warnings.append(
        "Served a stale cached copy because the network failed: \(staleBecause.code.rawValue).")
    }
    return attachment
  }

  // MARK: The file's actions, on the check thread

  /// Performs `first` and the file actions that follow it, on the calling check thread, and
  /// returns the first action that is not one (an answer or a failure). Whatever file the miss
  /// still holds then is removed.
  private func fileWork(from first: MissMachine.Action, signal: StopSignal) -> MissMachine.Action {
    pipeline.observer?(.downloaded, url.text)
    defer { pipeline.observer?(.finished, url.text) }
    guard let fetched else {
      held?.discard()
      held = nil
      return .fail(AttachmentError(.ioError, "No downloaded body to check."))
    }
    // A rescue that the first bytes already call for finds its rescuer's worker started (and
    // loading its library) while the body is checked.
    let preparation = pipeline.configuration.rescuers.preparation(
      for: Refusal.predicted(
        deferred: fetched.deferredRefusal, sniffed: fetched.sniffed, bytes: fetched.download.bytesReceived,
        limits: pipeline.configuration.limits))
    defer {
      preparation?.wait()
      held?.discard()
      held = nil
    }
    var action = first
    while let performed = perform(action, fetched, signal) { action = performed }
    return action
  }

  /// Performs one file action and returns the machine's next action; `nil` when `action` is
  /// not a file action (it is the loop's to perform).
  private func perform(
    _ action: MissMachine.Action, _ fetched: AttachmentPipeline.Fetched, _ signal: StopSignal
  ) -> MissMachine.Action? {
    switch action {
    case .check:
      phase.enter("while the file's structure was checked")
      let checked = pipeline.check(fetched, signal: signal)
      validation = try? checked.get()
      if validation != nil { pipeline.observer?(.validated, url.text) }
      let stop = Self.stop(after: checked.failure?.error, signal)
      return stop.map { machine.stopped($0) } ?? machine.checked(checked)
    case .rescue(let name, let refusal), .improve(let name, let refusal):
      phase.enter("while the file was rescued")
      let result = rescueHeld(by: name, refusal: refusal, fetched, signal)
      let stop = Self.stop(after: result.failure, signal)
      return stop.map { machine.stopped($0) } ?? machine.rescued(result)
    case .publish:
      phase.enter("while the file was published")
      pipeline.proposePosterTime(&validation, file: held, signal: signal)
      pipeline.warnAboutTransportSecurity(&validation, url: url, fetched: fetched)
      let file = held
      held = nil  // consumed by publishing, whatever its outcome
      let result = pipeline.publish(file, validation: validation, fetched: fetched, url: url)
      published = try? result.get()
      return machine.published(result.map { _ in })
    case .download, .refresh, .answerFromCache, .answerPublished, .fail:
      return nil
    }
  }

  /// Rescues the held file with the rescuer called `name`: on success its checked output
  /// replaces it (and the validation); on failure it stays, for the next rescuer (or, after an
  /// improvement, to be delivered).
  private func rescueHeld(
    by name: String, refusal: Refusal, _ fetched: AttachmentPipeline.Fetched, _ signal: StopSignal
  ) -> Result<Validation, AttachmentError> {
    let rescued = pipeline.rescue(
      held, bytes: fetched.download.bytesReceived, refusal: refusal, by: name, signal: signal)
    if case .success(let (output, checked)) = rescued {
      held?.discard()
      held = output
      validation = checked
      pipeline.observer?(.validated, url.text)
    }
    return rescued.map(\.1)
  }

  /// The stop to tell the machine after a step: the caller has gone or the deadline has passed
  /// meanwhile. `nil` when neither, or when the step itself failed for it (`deadline_exceeded`,
  /// `cancelled`): its own message says where the time went, and the machine ends on it.
  private static func stop(after failure: AttachmentError?, _ signal: StopSignal) -> ProbeStop? {
    if failure?.isStop == true { return nil }
    return signal.reason
  }
}
