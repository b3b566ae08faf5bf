/// The steps of a miss, each performing one action of a ``MissMachine`` for its one owner,
/// ``MissDriver``: the download (in the request's task), the refresh of a revalidated copy, the
/// complete-file checks, a rescue and publishing (on the check thread), and the answers.
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

  /// Runs one miss to its answer: from the object store when it holds a verified copy
  /// (``fromStore(_:deadline:start:)``), else by ``MissDriver``, whose published answer is then
  /// written to the store in the background; every file it made is published or removed
  /// by then. `phase` is told where the miss is, for the callers that share it
  /// (``FlightPhase``); `confirming`: `stale` is a fresh copy the origin confirms for this
  /// caller's URL (``HitConfirmation``).
  func miss(
    url: AttachmentURL, stale: CacheEntry?, deadline: ContinuousClock.Instant, start: ContinuousClock.Instant,
    phase: FlightPhase = FlightPhase(), confirming: Bool = false
  ) async -> Result<Attachment, AttachmentError> {
    var stale = stale
    var lease: FleetStore.Lease?
    if stale == nil, sharedTier != nil {
      phase.enter("while the store was read")
      switch await fromStore(url, deadline: deadline, start: start) {
      case .answer(let attachment): return .success(attachment)
      case .stale(let entry): stale = entry
      case .missing:
        guard let store else { break }
        phase.enter("while another instance of the fleet held the file's lease")
        switch await leaseOrWait(url, store: store, deadline: deadline, start: start) {
        case .answer(let attachment): return .success(attachment)
        case .hold(let taken): lease = taken
        case .proceed: break
        }
      case .nothing: break
      }
    }
    let result = await MissDriver(
      pipeline: self, url: url, stale: stale, deadline: deadline, start: start, phase: phase,
      confirming: confirming
    ).run()
    writeBehind(result, url: url)
    if let lease { store?.release(lease, of: url.key) }
    return result
  }

  /// A `304`'s headers merged into `entry`'s stored ones (RFC 9111 §4.3.4), and the freshness
  /// they give: a `304` that repeats no `Cache-Control` keeps the origin's lifetime instead of
  /// falling to the default.
  func revalidated(
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
  func download(
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

  /// Adds the `ats` warning to the validation about to be published when the body came over
  /// plain HTTP (and the configuration asks for it); stored with the entry, hits carry it.
  func warnAboutTransportSecurity(
    _ validation: inout Validation?, url: AttachmentURL, fetched: Fetched
  ) {
    guard configuration.warnsAboutTransportSecurity,
      let warning = TransportSecurity.warning(
        requested: url.text, final: fetched.download.finalURL, tls: fetched.download.tls),
      validation?.warnings.contains(warning) == false
    else { return }
    validation?.warnings.append(warning)
  }

  /// The complete-file checks of a downloaded body, continuing from what streaming proved (a
  /// refusal streaming deferred for a rescuer is the answer without a walk).
  func check(_ fetched: Fetched, signal: StopSignal) -> Result<Validation, Refusal> {
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
  func rescue(
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
        // (not decoded again: a rescue decodes what it copies, and encodes the rest itself)
        var validation = try Validator(limits: validator.limits).judge(
          file: output.path, sha256: nil, signal: signal, sniffed: nil)
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
  func publish(
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
  func answer(
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
