/// The owner of a ``MissMachine``: it performs each action the machine returns (download,
/// refresh, check, rescue, publish) and feeds the result back, until the machine answers.
/// The network part runs in the request's task; the file-sized part on a check thread.
extension AttachmentPipeline {
  /// A completed transfer and what streaming proved of its body.
  struct Fetched: Sendable {
    let download: Download
    let body: CacheBodyFile
    let sniffed: SniffVerdict?
    let deferredRefusal: Refusal?
    let freshness: Freshness.Policy
    let now: Double
  }

  /// Runs one miss to its answer; every file it made is published or removed by then.
  /// `phase` is told where the miss is, for the callers that share it (``FlightPhase``);
  /// `confirming`: `stale` is a fresh copy the origin confirms for this caller's URL
  /// (``HitConfirmation``).
  func miss(
    url: AttachmentURL, stale: CacheEntry?, deadline: ContinuousClock.Instant, start: ContinuousClock.Instant,
    phase: FlightPhase = FlightPhase(), confirming: Bool = false
  ) async -> Result<Attachment, AttachmentError> {
    // A copy being confirmed for this caller never stands in for the origin's refusal.
    var machine = MissMachine(
      stale: stale, policy: hitPolicy, useStaleOnError: configuration.useStaleOnError && !confirming)
    var action = machine.start()
    var last: Fetched?
    while true {
      switch action {
      case .download(let ifNoneMatch, let ifModifiedSince):
        phase.enter("before the download finished")
        switch await download(
          url, ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, deadline: deadline,
          counting: phase.receivedBytes)
        {
        case .failure(let error):
          action = machine.downloadFailed(error)
        case .success(let fetched):
          action = machine.downloaded(
            notModified: fetched.download.isNotModified, hasBody: fetched.download.file != nil)
          guard action == .check else {
            fetched.body.discard()
            last = fetched
            continue
          }
          // The complete-file checks (and a rescue) and publishing run off the cooperative
          // pool, under the same deadline, and stop when the caller cancels.
          phase.enter("while the file's structure was checked")
          return await OffPoolWork.run(deadline: deadline) { [self, machine] signal in
            self.finish(fetched, machine: machine, url: url, start: start, signal: signal, phase: phase)
          }
        }
      case .refresh(let entry):
        guard let fetched = last else {
          return .failure(AttachmentError(.networkError, "No response to refresh from."))
        }
        let (validators, freshness) = revalidated(entry, of: url, by: fetched)
        action = machine.refreshed(
          Result { () throws(AttachmentError) in
            try tier.refresh(entry, validators: validators, freshness: freshness, now: fetched.now)
          })
      case .answerFromCache(let entry, let source, let staleBecause):
        var attachment = answer(entry, url: url, source: source, start: start)
        if source == .revalidated { attachment.transferTimings = last?.download.timings }
        if let staleBecause {
          attachment.isStale = true
          attachment.validation.warnings.append(
            "Served a stale cached copy because the network failed: \(staleBecause.code.rawValue).")
        }
        return .success(attachment)
      case .fail(let error):
        return .failure(error)
      case .check, .rescue, .improve, .publish, .answerPublished:
        preconditionFailure("\(action) is the check thread's (see finish)")
      }
    }
  }

  /// A `304`'s headers merged into `entry`'s stored ones (RFC 9111 §4.3.4), and the freshness
  /// they give: a `304` that repeats no `Cache-Control` keeps the origin's lifetime instead of
  /// falling to the default.
  private func revalidated(
    _ entry: CacheEntry, of url: AttachmentURL, by fetched: Fetched
  ) -> (StoredValidators, Freshness.Policy) {
    let merged = StoredValidators(fetched.download.headers, url: url).merged(over: entry.record)
    let freshness = Freshness.policy(
      cacheControl: merged.cacheControl, expires: merged.expires, date: merged.date,
      lastModified: merged.lastModified, now: fetched.now,
      defaultLifetime: configuration.cache.defaultFreshnessSeconds, shared: configuration.cache.isShared)
    return (merged, freshness)
  }

  /// Downloads `url` into a new body file of the cache, sniffing as it streams.
  private func download(
    _ url: AttachmentURL, ifNoneMatch: String?, ifModifiedSince: String?, deadline: ContinuousClock.Instant,
    counting received: ReceivedBytes
  ) async -> Result<Fetched, AttachmentError> {
    let body: CacheBodyFile
    let sniffer = StreamingSniffer(limits: configuration.limits, tally: identifications)
    let rescuers = configuration.rescuers
    let rescueInspector = rescuers.isEmpty ? nil : RescueInspector(sniffer: sniffer, rescuers: rescuers)
    var request = DownloadRequest(url: url, inspector: rescueInspector ?? sniffer)
    request.receivedBytes = received
    do {
      body = try tier.makeBodyFile()
    } catch {
      return .failure(error)
    }
    do {
      request.bodyFile = try body.transferTarget()
    } catch {
      body.discard()
      return .failure(error)
    }
    request.leavesSmallBodyDigestToCaller = true  // the check hashes it as it reads it
    request.ifNoneMatch = ifNoneMatch
    request.ifModifiedSince = ifModifiedSince
    let download: Download
    do {
      download = try await downloaderBox.downloader.download(request, deadline: deadline)
    } catch {
      body.discard()
      return .failure(error)
    }
    let now = FileSystem.now()
    let headers = download.headers
    let freshness = Freshness.policy(
      cacheControl: headers.cacheControl, expires: headers.expires, date: headers.date,
      lastModified: headers.lastModified, now: now,
      defaultLifetime: configuration.cache.defaultFreshnessSeconds, shared: configuration.cache.isShared)
    return .success(
      Fetched(
        download: download, body: body, sniffed: sniffer.verdict,
        deferredRefusal: rescueInspector?.deferredRefusal,
        freshness: freshness, now: now))
  }

  /// The check thread's part of a miss: checks the complete body (rescuing it when a rescuer
  /// undoes the refusal) and publishes what is delivered (or stashes it, for `no-store`),
  /// unless `signal` says the caller is gone or the deadline has passed: then the files are
  /// removed and nothing is published. Runs on a check thread (see ``OffPoolWork``).
  private func finish(
    _ fetched: Fetched, machine: MissMachine, url: AttachmentURL, start: ContinuousClock.Instant,
    signal: StopSignal, phase: FlightPhase
  ) -> Result<Attachment, AttachmentError> {
    defer { observer?(.finished, url.text) }
    observer?(.downloaded, url.text)
    var machine = machine
    // A rescue that the first bytes already call for finds its rescuer's worker started (and
    // loading its library) while the body is checked.
    let predicted = Refusal.predicted(
      deferred: fetched.deferredRefusal, sniffed: fetched.sniffed, bytes: fetched.download.bytesReceived,
      limits: configuration.limits)
    let preparation = configuration.rescuers.preparation(for: predicted)
    defer { preparation?.wait() }
    var held: CacheBodyFile? = fetched.body  // the file this miss still owns: body, then rescue output
    defer { held?.discard() }
    var validation: Validation?
    var published: Published?
    var action = MissMachine.Action.check
    while true {
      switch action {
      case .check:
        let checked = check(fetched, signal: signal)
        validation = try? checked.get()
        if validation != nil { observer?(.validated, url.text) }
        let stop = Self.stop(after: checked.failure?.error, signal)
        action = stop.map { machine.stopped($0) } ?? machine.checked(checked)
      case .rescue(let name, let refusal), .improve(let name, let refusal):
        phase.enter("while the file was rescued")
        let result = rescueHeld(&held, &validation, by: name, refusal: refusal, fetched, signal, url)
        let stop = Self.stop(after: result.failure, signal)
        action = stop.map { machine.stopped($0) } ?? machine.rescued(result)
      case .publish:
        phase.enter("while the file was published")
        proposePosterTime(&validation, file: held, signal: signal)
        warnAboutTransportSecurity(&validation, url: url, fetched: fetched)
        let file = held
        held = nil  // consumed by publishing, whatever its outcome
        let result = publish(file, validation: validation, fetched: fetched, url: url)
        published = try? result.get()
        action = machine.published(result.map { _ in })
      case .answerPublished:
        guard let validation, let published else {
          return .failure(AttachmentError(.ioError, "No published file to answer with."))
        }
        return .success(answer(published, validation: validation, fetched: fetched, url: url, start: start))
      case .fail(let error):
        return .failure(error)
      case .download, .refresh, .answerFromCache:
        preconditionFailure("\(action) is the request task's (see miss)")
      }
    }
  }

  /// The stop to tell the machine after a step: the caller has gone or the deadline has passed
  /// meanwhile. `nil` when neither, or when the step itself failed for it (`deadline_exceeded`,
  /// `cancelled`): its own message says where the time went, and the machine ends on it.
  private static func stop(after failure: AttachmentError?, _ signal: StopSignal) -> ProbeStop? {
    if failure?.isStop == true { return nil }
    return signal.reason
  }

  /// Adds the `ats` warning to the validation about to be published when the body came over
  /// plain HTTP (and the configuration asks for it); stored with the entry, hits carry it.
  private func warnAboutTransportSecurity(
    _ validation: inout Validation?, url: AttachmentURL, fetched: Fetched
  ) {
    guard configuration.warnsAboutTransportSecurity,
      let warning = TransportSecurity.warning(
        requested: url.text, final: fetched.download.finalURL, tls: fetched.download.tls),
      validation?.warnings.contains(warning) == false
    else { return }
    validation?.warnings.append(warning)
  }

  /// Rescues the file this miss holds (`held`) with the rescuer called `name`: on success its
  /// checked output replaces it (and `validation`); on failure it stays, for the next rescuer
  /// (or, after an improvement, to be delivered).
  private func rescueHeld(
    _ held: inout CacheBodyFile?, _ validation: inout Validation?, by name: String, refusal: Refusal,
    _ fetched: Fetched, _ signal: StopSignal, _ url: AttachmentURL
  ) -> Result<Validation, AttachmentError> {
    let rescued = rescue(
      held, bytes: fetched.download.bytesReceived, refusal: refusal, by: name, signal: signal)
    if case .success(let (output, checked)) = rescued {
      held?.discard()
      held = output
      validation = checked
      observer?(.validated, url.text)
    }
    return rescued.map(\.1)
  }

  /// The complete-file checks of a downloaded body, continuing from what streaming proved (a
  /// refusal streaming deferred for a rescuer is the answer without a walk).
  private func check(_ fetched: Fetched, signal: StopSignal) -> Result<Validation, Refusal> {
    if let refusal = fetched.deferredRefusal { return .failure(refusal) }
    return Result { () throws(Refusal) in
      try validator.judge(
        file: fetched.body.path, sha256: fetched.download.sha256, signal: signal, sniffed: fetched.sniffed,
        tally: identifications)
    }
  }

  /// Rescues a refused body (`source`, which stays the caller's) into a new body file with the
  /// rescuer called `name`, and checks the result, on the calling check thread, within
  /// `signal`'s deadline; the returned file is the caller's to publish (or discard).
  private func rescue(
    _ source: CacheBodyFile?, bytes: Int64, refusal: Refusal, by name: String, signal: StopSignal
  ) -> Result<(CacheBodyFile, Validation), AttachmentError> {
    guard let source, let rescuer = configuration.rescuers.rescuer(named: name) else {
      return .failure(refusal.error)
    }
    let output: CacheBodyFile
    do {
      output = try tier.makeBodyFile()
    } catch {
      return .failure(error)
    }
    let result = Result { () throws(AttachmentError) -> (CacheBodyFile, Validation) in
      var rescued = try rescuer.rescue(
        RescueJob(
          source: source.path, bytes: bytes, refusal: refusal, output: output.path,
          limits: configuration.limits,
          deadline: signal.deadline, isCancelled: { signal.reason == .cancelled }))
      // The original's typed verdict, so a hit by a caller without this rescuer answers as a
      // fresh download would (HitPolicy).
      rescued.recordOriginal(refusal)
      do throws(Refusal) {
        var validation = try validator.judge(file: output.path, sha256: nil, signal: signal, sniffed: nil)
        validation.record(rescued)
        return (output, validation)
      } catch {
        throw error.error
      }
    }
    if case .failure = result { output.discard() }
    return result
  }

  /// Publishes a checked file under `key` (or stashes it, for `no-store`); consumes the file.
  private func publish(
    _ file: CacheBodyFile?, validation: Validation?, fetched: Fetched, url: AttachmentURL
  ) -> Result<Published, AttachmentError> {
    guard let file, let validation else {
      file?.discard()
      return .failure(AttachmentError(.ioError, "No checked file to publish."))
    }
    return Result { () throws(AttachmentError) in
      try publish(file, validation: validation, fetched: fetched, url: url)
    }
  }

  /// The answer of a miss whose checked file was `published`.
  private func answer(
    _ published: Published, validation: Validation, fetched: Fetched, url: AttachmentURL,
    start: ContinuousClock.Instant
  ) -> Attachment {
    Attachment(
      url: url.redacted, path: published.path, validation: validation, source: .network, isStale: false,
      bytesTransferred: fetched.download.bytesReceived, transferTimings: fetched.download.timings,
      totalMicroseconds: Self.microseconds(since: start), freshUntil: published.freshUntil,
      lastModified: fetched.download.headers.lastModified,
      cacheControl: fetched.download.headers.cacheControl,
      fetchedAt: fetched.now, isUnindexed: published.isUnindexed)
  }

  /// Where a checked file went: its path, until when it is fresh (`nil`: `no-store`), and
  /// whether it is outside the index (this answer's alone: `no-store`, or `private` to a shared
  /// cache).
  struct Published {
    var path: String
    var freshUntil: Double?
    var isUnindexed = false
  }

  private func publish(
    _ file: CacheBodyFile, validation: Validation, fetched: Fetched, url: AttachmentURL
  ) throws(AttachmentError) -> Published {
    if fetched.freshness.noStore || fetched.freshness.isPrivateToSharedCache {
      let path = try tier.stash(body: file, validation: validation)
      // A private answer keeps its lifetime: its receiver may keep it that long.
      let freshUntil = fetched.freshness.noStore ? nil : fetched.now + fetched.freshness.lifetime
      return Published(path: path, freshUntil: freshUntil, isUnindexed: true)
    }
    // Without private networks every connection was to a public address (the open-socket
    // check refused the rest), whether or not libcurl reports the peer.
    let peer =
      fetched.download.peerAddressClass ?? (configuration.downloader.allowPrivateNetworks ? nil : .public)
    let entry = try tier.publish(
      body: file, validation: validation, key: url.key,
      validators: StoredValidators(fetched.download.headers, url: url),
      peer: peer,
      freshness: fetched.freshness, now: fetched.now)
    return Published(path: entry.path, freshUntil: entry.record.freshUntil)
  }
}
