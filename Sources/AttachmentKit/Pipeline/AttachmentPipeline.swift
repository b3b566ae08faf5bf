import Glibc
import PosixLock

/// The one call an extension (or the command line) makes: a URL in, a validated local file
/// out, from the cache when possible, under an absolute deadline.
///
/// Looks up the cache; on a miss (or a stale entry) fetches, sniffing while streaming so a
/// wrong type stops early; validates the complete file; publishes it to the cache; and answers.
/// Concurrent calls for one URL share one request. A rejected file is never published, and a
/// failure leaves the cache as it was.
///
/// ```swift
/// let pipeline = try AttachmentPipeline(configuration: PipelineConfiguration())
/// let attachment = try await pipeline.attachment(for: url, deadline: .now + .seconds(25))
/// // UNNotificationAttachment(identifier: "media", url: URL(fileURLWithPath: attachment.path),
/// //   options: [UNNotificationAttachmentOptionsTypeHintKey: attachment.uti])
/// ```
public final class AttachmentPipeline: Sendable {
  /// The pipeline's settings.
  public let configuration: PipelineConfiguration
  /// The cache it reads and writes.
  public let cache: AttachmentCache
  private let validator: Validator
  private let hitPolicy: HitPolicy
  private let downloaderBox: LazyDownloader
  private let flights = SingleFlight<URLKey, Attachment>()
  private let observer: StageObserver?

  /// Opens the cache and prepares the pipeline. The downloader (and libcurl) start on the
  /// first cache miss, not before, so a run that only hits the cache never loads them.
  /// - Throws: `io_error` when the cache directory is unusable.
  public convenience init(configuration: PipelineConfiguration) throws(AttachmentError) {
    try self.init(configuration: configuration, observer: nil)
  }

  /// A pipeline that reports each miss's stages to `observer` (tests).
  init(configuration: PipelineConfiguration, observer: StageObserver?) throws(AttachmentError) {
    self.configuration = configuration
    self.observer = observer
    cache = try AttachmentCache(configuration: configuration.cache)
    validator = Validator(limits: configuration.limits)
    let limits = EffectiveLimits(configuration)
    hitPolicy = HitPolicy(configuration: configuration, limits: limits)
    var downloader = configuration.downloader
    downloader.maximumBodyBytes = limits.transferBytes
    downloaderBox = LazyDownloader(configuration: downloader)
  }

  /// The attachment for `url`, ready to hand to iOS.
  ///
  /// - Parameters:
  ///   - url: an absolute http(s) URL.
  ///   - deadline: the absolute instant by which the answer comes, cache lookup, redirects,
  ///     download and validation included.
  /// - Returns: the ``Attachment``, whose ``Attachment/source`` says whether it came from the
  ///   network, the cache, or the cache after a `304`.
  /// - Throws: ``AttachmentError``: the fetch codes (`invalid_url`, `dns_failed`,
  ///   `http_status`, `deadline_exceeded`, `cancelled`, …) when the file could not be
  ///   fetched; the validation codes (`unsupported_type`, `too_large`, `too_long`,
  ///   `too_many_pixels`, `truncated`, `empty`) when its bytes are not an acceptable
  ///   attachment; `io_error` when the cache cannot be written.
  ///   - reload: skip the cache lookup and download again (the result still refreshes the
  ///     cache), like a browser's reload.
  public func attachment(
    for url: String, deadline: ContinuousClock.Instant, reload: Bool = false
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(for: AttachmentURL(url), deadline: deadline, reload: reload)
  }

  /// The attachment for a URL checked already: ``attachment(for:deadline:reload:)-(String,_,_)``
  /// without parsing the text again, with the same results and errors (except `invalid_url` and
  /// `unsupported_scheme`, which ``AttachmentURL/init(_:)`` gave).
  public func attachment(
    for url: AttachmentURL, deadline: ContinuousClock.Instant, reload: Bool = false
  ) async throws(AttachmentError) -> Attachment {
    let start = ContinuousClock.now
    let key = url.key
    let now = FileSystem.now()
    var cached = reload ? nil : cache.entry(for: key)
    if let entry = cached {
      // The stored facts are judged against this caller's policy on every hit.
      switch hitPolicy.verdict(on: entry.record) {
      case .serve:
        if entry.isFresh(at: now) {
          cache.touch(entry, now: now)
          return answer(entry, url: url, source: .cache, start: start)
        }
      case .refuse(let error):
        if entry.isFresh(at: now) { throw error }
      case .undecided:
        cached = nil
      }
    }
    let stale = cached
    while true {
      // A call that joins a fetch already under way shares it, and with it the deadline of
      // the call that started it. When that earlier deadline ends the shared fetch, a call
      // whose own deadline is later fetches again (or joins whoever does) instead of
      // answering with someone else's deadline.
      let outcome = await flights.run(key, deadline: deadline) { [self] in
        await self.fetch(url: url, key: key, stale: stale, deadline: deadline, start: start)
      }
      if case .failure(let error) = outcome, error.code == .deadlineExceeded, ContinuousClock.now < deadline,
        !Task.isCancelled
      {
        continue
      }
      return try outcome.get()
    }
  }

  /// The attachment for `url` if the cache holds a fresh, size-checked copy that this
  /// pipeline's policy accepts, without any network, task or thread: the cheapest possible
  /// answer. `nil` means ask ``attachment(for:deadline:reload:)`` (which also gives the
  /// refusal when the policy refuses the cached copy).
  public func cachedAttachment(for url: String) -> Attachment? {
    guard let checked = try? AttachmentURL(url) else { return nil }
    return cachedAttachment(for: checked)
  }

  /// ``cachedAttachment(for:)-(String)`` for a URL checked already.
  public func cachedAttachment(for url: AttachmentURL) -> Attachment? {
    let start = ContinuousClock.now
    guard let entry = cache.entry(for: url.key) else { return nil }
    let now = FileSystem.now()
    guard entry.isFresh(at: now), case .serve = hitPolicy.verdict(on: entry.record) else { return nil }
    cache.touch(entry, now: now)
    return answer(entry, url: url, source: .cache, start: start)
  }

  /// How many calls for `url` wait on one fetch now (tests: to know a call has joined).
  func callersWaiting(for url: AttachmentURL) -> Int { flights.waiting(for: url.key) }

  /// The attachment for `url` within `timeout` from now: a convenience for
  /// ``attachment(for:deadline:)`` with the same results and errors.
  public func attachment(
    for url: String, timeout: Duration, reload: Bool = false
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(for: url, deadline: .now + timeout, reload: reload)
  }

  /// ``attachment(for:timeout:reload:)-(String,_,_)`` for a URL checked already.
  public func attachment(
    for url: AttachmentURL, timeout: Duration, reload: Bool = false
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(for: url, deadline: .now + timeout, reload: reload)
  }

  // MARK: - The miss path

  private func fetch(
    url: AttachmentURL, key: URLKey, stale: CacheEntry?, deadline: ContinuousClock.Instant,
    start: ContinuousClock.Instant
  ) async -> Result<Attachment, AttachmentError> {
    let body: CacheBodyFile
    do {
      body = try cache.makeBodyFile()
    } catch {
      return .failure(error)
    }
    let sniffer = StreamingSniffer(limits: configuration.limits)
    let rescuers = configuration.rescuers
    let rescueInspector = rescuers.isEmpty ? nil : RescueInspector(sniffer: sniffer, rescuers: rescuers)
    var request = DownloadRequest(url: url, inspector: rescueInspector ?? sniffer)
    request.bodyFile = (body.path, fcntl(body.descriptor, F_DUPFD_CLOEXEC, 0))
    request.leavesSmallBodyDigestToCaller = true  // the check hashes it as it reads it
    request.ifNoneMatch = stale?.record.etag
    request.ifModifiedSince = stale?.record.etag == nil ? stale?.record.lastModified : nil

    let download: Download
    do {
      download = try await downloaderBox.downloader.download(request, deadline: deadline)
    } catch {
      body.discard()
      if configuration.useStaleOnError, let stale, error.kind == .fetch,
        case .serve = hitPolicy.verdict(on: stale.record)
      {
        var attachment = answer(stale, url: url, source: .cache, start: start)
        attachment.isStale = true
        attachment.validation.warnings.append(
          "Served a stale cached copy because the network failed: \(error.code.rawValue).")
        return .success(attachment)
      }
      return .failure(error)
    }

    let now = FileSystem.now()
    let headers = download.headers
    let policy = Freshness.policy(
      cacheControl: headers.cacheControl, expires: headers.expires, date: headers.date,
      lastModified: headers.lastModified, now: now,
      defaultLifetime: configuration.cache.defaultFreshnessSeconds)

    if download.isNotModified, let stale {
      body.discard()
      do {
        guard let refreshed = try cache.refresh(stale, headers: headers, freshness: policy, now: now) else {
          // The copy the server confirmed was removed meanwhile (another process's sweep):
          // fetch it again, unconditionally, within the same deadline.
          return await fetch(url: url, key: key, stale: nil, deadline: deadline, start: start)
        }
        if case .refuse(let error) = hitPolicy.verdict(on: refreshed.record) { return .failure(error) }
        var attachment = answer(refreshed, url: url, source: .revalidated, start: start)
        attachment.transferTimings = download.timings
        return .success(attachment)
      } catch {
        return .failure(error)
      }
    }
    guard download.file != nil else {
      body.discard()
      return .failure(AttachmentError(.networkError, "The server answered 304 to an unconditional request."))
    }
    // The complete-file checks (and a rescue) and publishing run off the cooperative pool,
    // under the same deadline, and stop when the caller cancels.
    let sniffed = sniffer.verdict
    let deferredRefusal = rescueInspector?.deferredRefusal
    return await OffPoolWork.run(deadline: deadline) { [self] signal in
      self.checkAndPublish(
        body: body, download: download, sniffed: sniffed, deferredRefusal: deferredRefusal, url: url,
        key: key,
        freshness: policy, now: now, start: start, signal: signal)
    }
  }

  /// Validates the complete body (rescuing it when the policy allows and the refusal is one a
  /// rescue undoes) and publishes what is delivered (or stashes it, for `no-store`), unless
  /// `signal` says the caller is gone or the deadline has passed: then the files are removed
  /// and nothing is published. Runs on a check thread (see ``OffPoolWork``).
  private func checkAndPublish(
    body: CacheBodyFile, download: Download, sniffed: SniffVerdict?, deferredRefusal: AttachmentError?,
    url: AttachmentURL, key: URLKey, freshness policy: Freshness.Policy, now: Double,
    start: ContinuousClock.Instant, signal: StopSignal
  ) -> Result<Attachment, AttachmentError> {
    defer { observer?(.finished, url.text) }
    observer?(.downloaded, url.text)
    // A rescue that the first bytes already call for finds its rescuer's library started on
    // another core while the body is checked (waited for here, on the check thread, used or not).
    let evidence = RescueEvidence(sniffed: sniffed, refusal: deferredRefusal, bytes: download.bytesReceived)
    let preparation = configuration.rescuers.lazy.compactMap {
      $0.prepare(for: evidence, limits: self.configuration.limits)
    }.first
    defer { preparation?.wait() }
    var validation: Validation
    var delivered = body  // the rescued file instead, after a rescue
    let checked: Result<Validation, AttachmentError> =
      if let deferredRefusal {
        .failure(deferredRefusal)
      } else {
        Result { () throws(AttachmentError) in
          try validator.validate(
            file: body.path, sha256: download.sha256.isEmpty ? nil : download.sha256, signal: signal,
            sniffed: sniffed)
        }
      }
    switch checked {
    case .success(let valid):
      validation = valid
    case .failure(let error):
      guard signal.reason == nil,
        let rescuer = configuration.rescuers.rescuer(for: evidence.refused(with: error))
      else {
        body.discard()
        return .failure(error)
      }
      switch self.rescue(
        body: body, bytes: download.bytesReceived, refusal: error, by: rescuer, signal: signal)
      {
      case .success(let (output, rescued)):
        delivered = output
        validation = rescued
      case .failure(let error):
        return .failure(error)
      }
    }
    observer?(.validated, url.text)
    if let reason = signal.reason {
      delivered.discard()
      return .failure(StopSignal.error(for: reason, while: "before the file was published"))
    }
    do {
      let path: String
      var freshUntil: Double?
      if policy.noStore {
        path = try cache.stash(body: delivered, validation: validation)
      } else {
        // Without private networks every connection was to a public address (the open-socket
        // check refused the rest), whether or not libcurl reports the peer.
        let peer =
          download.peerAddressClass ?? (configuration.downloader.allowPrivateNetworks ? nil : .public)
        let entry = try cache.publish(
          body: delivered, validation: validation, key: key, headers: download.headers, peer: peer,
          freshness: policy,
          now: now)
        path = entry.path
        freshUntil = entry.record.freshUntil
      }
      return .success(
        Attachment(
          url: url.redacted, path: path, validation: validation, source: .network, isStale: false,
          bytesTransferred: download.bytesReceived, transferTimings: download.timings,
          totalMicroseconds: Self.microseconds(since: start), freshUntil: freshUntil))
    } catch {
      return .failure(error)
    }
  }

  /// Rescues a refused body into a new body file and validates the result, on the calling
  /// check thread, within `signal`'s deadline. Consumes `body`; the returned file is the
  /// caller's to publish (or discard).
  private func rescue(
    body: CacheBodyFile, bytes: Int64, refusal: AttachmentError, by rescuer: any Rescuer, signal: StopSignal
  ) -> Result<(CacheBodyFile, Validation), AttachmentError> {
    defer { body.discard() }
    let output: CacheBodyFile
    do {
      output = try cache.makeBodyFile()
    } catch {
      return .failure(error)
    }
    let result = Result { () throws(AttachmentError) -> (CacheBodyFile, Validation) in
      let rescued = try rescuer.rescue(
        RescueJob(
          source: body.path, bytes: bytes, refusal: refusal, output: output.path,
          limits: configuration.limits,
          deadline: signal.deadline))
      var validation = try validator.validate(file: output.path, sha256: nil, signal: signal, sniffed: nil)
      validation.rescued = rescued
      return (output, validation)
    }
    if case .failure = result { output.discard() }
    return result
  }

  private func answer(
    _ entry: CacheEntry, url: AttachmentURL, source: Attachment.Source, start: ContinuousClock.Instant
  ) -> Attachment {
    Attachment(
      url: url.redacted, path: entry.path, validation: entry.record.validation, source: source,
      isStale: false, bytesTransferred: 0, transferTimings: nil,
      totalMicroseconds: Self.microseconds(since: start), freshUntil: entry.record.freshUntil)
  }

  private static func microseconds(since start: ContinuousClock.Instant) -> Int64 {
    let (seconds, attoseconds) = (ContinuousClock.now - start).components
    return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
  }
}

/// Starts the downloader (its engine thread and libcurl's global state) on first use.
private final class LazyDownloader: Sendable {
  private let configuration: DownloaderConfiguration
  private let box = Locked<Downloader?>(nil)

  init(configuration: DownloaderConfiguration) {
    self.configuration = configuration
  }

  var downloader: Downloader {
    box.withLock { box in
      if let downloader = box { return downloader }
      let downloader = Downloader(configuration: configuration)
      box = downloader
      return downloader
    }
  }
}
