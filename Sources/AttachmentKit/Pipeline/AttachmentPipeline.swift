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
/// let attachment = try await pipeline.attachment(AttachmentRequest(url: url, timeout: .seconds(25)))
/// // UNNotificationAttachment(identifier: "media", url: URL(fileURLWithPath: attachment.path),
/// //   options: [UNNotificationAttachmentOptionsTypeHintKey: attachment.uti])
/// ```
public final class AttachmentPipeline: Sendable {
  /// The pipeline's settings.
  public let configuration: PipelineConfiguration
  /// The cache it reads and writes.
  public let cache: AttachmentCache
  /// What the lookup and the miss path store answers in: ``cache`` unless a test put another
  /// tier in front of it (see ``CacheTier``).
  let tier: any CacheTier
  let validator: Validator
  let hitPolicy: HitPolicy
  let downloaderBox: LazyDownloader
  private let flights = SingleFlight<URLKey, Attachment>()
  /// The URLs the origin confirmed for entries fetched with another (``HitConfirmation``).
  let confirmations = ConfirmedRequests()
  /// The pipelines of the profiles asked for so far (see ``profiled(_:)``).
  private let profiles = Locked<[AttachmentProfile: AttachmentPipeline]>([:])
  let observer: StageObserver?
  /// How often this pipeline's downloaded bodies were identified (once per miss; for tests).
  let identifications = IdentificationTally()
  /// The object store behind the local cache (``PipelineConfiguration/store``, with its leases
  /// and counters), shared with the pipelines of this one's profiles; `nil` without one.
  let store: FleetStore?
  /// The tier behind the local cache: ``store``, else ``PipelineConfiguration/sharedTier``.
  let sharedTier: (any SharedTier)?
  /// Writes to a shared tier other than the store running on threads of their own.
  let tierWrites = Locked(0)
  /// The largest body a miss may download (or read from the store).
  let transferLimit: Int64

  /// Opens the cache and prepares the pipeline. The downloader (and libcurl) start on the
  /// first cache miss, not before, so a run that only hits the cache never loads them.
  /// - Throws: `io_error` when the cache directory is unusable.
  public convenience init(configuration: PipelineConfiguration) throws(AttachmentError) {
    try self.init(configuration: configuration, observer: nil)
  }

  /// A pipeline that reports each miss's stages to `observer` (tests), storing in `tier` (made
  /// from `cache`, the disk cache this configuration opens) instead of the cache alone.
  init(
    configuration: PipelineConfiguration, observer: StageObserver?,
    tier: ((AttachmentCache) -> any CacheTier)? = nil, store: FleetStore? = nil
  ) throws(AttachmentError) {
    self.configuration = configuration
    self.observer = observer
    let cache = try AttachmentCache(configuration: configuration.cache)
    self.cache = cache
    self.tier = tier?(cache) ?? cache
    validator = Validator(limits: configuration.limits, decodeCheck: configuration.decodeCheck)
    let limits = EffectiveLimits(configuration)
    hitPolicy = HitPolicy(configuration: configuration, limits: limits)
    var downloader = configuration.downloader
    downloader.maximumBodyBytes = limits.transferBytes
    transferLimit = limits.transferBytes
    let fleet = store ?? configuration.store.map { FleetStore(configuration: $0) }
    self.store = fleet
    sharedTier = fleet ?? configuration.sharedTier
    downloaderBox = LazyDownloader(configuration: downloader)
  }

  /// The attachment a request asks for, ready to hand to iOS: from the cache when it holds a
  /// copy this caller accepts under the request's profile, else fetched (revalidating a stale
  /// copy), checked, rescued when a rescuer undoes a refusal, and published. When the URL fails
  /// or is refused, the request's ``AttachmentRequest/alternatives`` are tried in order within
  /// the same deadline.
  ///
  /// - Returns: the ``Attachment``, whose ``Attachment/source`` says whether it came from the
  ///   network, the cache, or the cache after a `304`, and ``Attachment/alternative`` which
  ///   alternative answered (with why the sources before it failed).
  /// - Throws: ``AttachmentError``: the fetch codes (`dns_failed`, `http_status`,
  ///   `deadline_exceeded`, `cancelled`, …) when the file could not be fetched; the validation
  ///   codes (`unsupported_type`, `too_large`, `too_long`, `too_many_pixels`, `truncated`,
  ///   `empty`) when its bytes are not an acceptable attachment (under the profile's rules, which
  ///   the message names); `io_error` when the cache cannot be written. With alternatives, the
  ///   URL's own failure, its message naming how each alternative failed.
  public func attachment(_ request: AttachmentRequest) async throws(AttachmentError) -> Attachment {
    try await attachment(request, after: nil)
  }

  /// Continues `request` from its ``lookup(_:)-(AttachmentRequest)``: answers a hit or a
  /// refusal at once, and otherwise goes on as ``attachment(_:)``, with the same results and
  /// errors. Looking up and then calling this costs one cache lookup in all.
  public func attachment(
    _ request: AttachmentRequest, after lookup: Lookup
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(request, after: .some(lookup))
  }

  /// What the cache holds for the request's URL under its profile and this pipeline's policy,
  /// without any network, task or thread: the one cache lookup of a request. A hit is marked
  /// used (the LRU clock); a request that reloads gets ``Lookup/miss``.
  /// - Throws: never for a standard profile; a profile's pipeline that cannot be made
  ///   (`io_error`) is answered as ``Lookup/refused(_:)``.
  public func lookup(_ request: AttachmentRequest) -> Lookup {
    do {
      return try profiled(request.profile).lookup(request.url, reload: request.cachePolicy == .reload)
    } catch {
      return .refused(error)
    }
  }

  /// The attachment for the URL `text` by `deadline`: ``attachment(_:)`` for a request with
  /// the defaults (the `ios` profile, the cache, no alternative), with its results and errors
  /// (`invalid_url` and `unsupported_scheme` for a text that is not an http(s) URL).
  public func attachment(
    for text: String, deadline: ContinuousClock.Instant
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(AttachmentRequest(url: text, deadline: deadline))
  }

  /// The attachment for the URL `text` within `timeout` from now: see
  /// ``attachment(for:deadline:)``.
  public func attachment(for text: String, timeout: Duration) async throws(AttachmentError) -> Attachment {
    try await attachment(AttachmentRequest(url: text, timeout: timeout))
  }

  /// The request, after its lookup when the caller made one: the URL, then each alternative.
  private func attachment(
    _ request: AttachmentRequest, after lookup: Lookup?
  ) async throws(AttachmentError) -> Attachment {
    let pipeline = try profiled(request.profile)
    let reload = request.cachePolicy == .reload
    var failures: [AttachmentError] = []
    // No array of sources is built: a hit (no alternative tried) allocates nothing here.
    for index in 0...request.alternatives.count {
      let url = index == 0 ? request.url : request.alternatives[index - 1]
      do throws(AttachmentError) {
        if index > 0 {
          if Task.isCancelled { throw AttachmentError.cancelledError() }
          guard ContinuousClock.now < request.deadline else {
            throw AttachmentError(
              .deadlineExceeded, "The deadline passed before alternative \(index) was tried.")
          }
        }
        var answer = try await pipeline.one(
          url, after: index == 0 ? lookup : nil, deadline: request.deadline, reload: reload)
        if index > 0 {
          answer.alternative = index - 1
          answer.failures = failures
        }
        (answer.thumbnail, answer.thumbnailProblems) = request.thumbnail.checked(against: answer.validation)
        return answer
      } catch {
        failures.append(error)
        if error.isStop { break }
      }
    }
    throw Self.failure(failures)
  }

  /// The error of a request whose every source failed: the URL's own, its message naming how
  /// each alternative tried failed; the stop itself when the request stopped.
  private static func failure(_ failures: [AttachmentError]) -> AttachmentError {
    guard let error = failures.first else { return AttachmentError(.cancelled, "No source was tried.") }
    if let last = failures.last, last.isStop, failures.count > 1 { return last }
    guard failures.count > 1 else { return error }
    let tried = failures.dropFirst().enumerated().map { "\($0.offset + 1): \($0.element.code.rawValue)" }
    return AttachmentError(
      error.code, error.message + " Alternatives failed too (\(tried.joined(separator: ", "))).",
      httpStatus: error.httpStatus, detected: error.detected, kind: error.kind)
  }

  /// One URL, after its lookup when there was one.
  private func one(
    _ url: AttachmentURL, after lookup: Lookup?, deadline: ContinuousClock.Instant, reload: Bool
  ) async throws(AttachmentError) -> Attachment {
    let start = ContinuousClock.now
    if let lookup { return try await attachment(for: url, after: lookup, deadline: deadline, start: start) }
    // Read before the lookup: a fetch of this URL that finishes between the lookup and the
    // flight is seen, and its answer looked up, instead of fetching the file a second time.
    let generation = flights.generation
    return try await attachment(
      for: url, after: self.lookup(url, reload: reload), deadline: deadline, start: start,
      lookedUpAt: reload ? nil : generation)
  }

  /// What the cache holds for `url` (see ``lookup(_:)-(AttachmentRequest)``), in this
  /// pipeline's own profile.
  func lookup(_ url: AttachmentURL, reload: Bool = false) -> Lookup {
    let start = ContinuousClock.now
    let url = keyed(url)
    let origins = configuration.downloader.allowedOrigins
    // A copy stored before the allowlist changed is not answered for an origin now refused.
    if !origins.isEmpty, !origins.allows(url.text) {
      return .refused(origins.refusal(url.text, redirect: false))
    }
    let now = FileSystem.now()
    guard !reload, let entry = tier.entry(for: url.key) else {
      // A presigned URL past its own expiry costs no request: the origin would refuse it.
      if url.key.droppedParameters, !url.keyRules.patterns.isEmpty,
        let expired = PresignedExpiry.refusal(of: url, now: now)
      {
        return .refused(expired)
      }
      return .miss
    }
    // A shared cache serves no private answer, even one a private user of the same directory
    // (a command's fetch) stored there: it is fetched for this caller, and not kept.
    if configuration.cache.isShared, Freshness.isPrivate(entry.record.cacheControl) { return .miss }
    // Keyed by object, authorized by request: an entry another URL fetched answers this caller
    // once the origin says this URL may have it (before any verdict that would describe it).
    switch HitConfirmation.verdict(
      for: url, recordSource: entry.record.source, confirmed: confirmations, now: now)
    {
    case .answer: break
    case .refuse(let error): return .refused(error)
    case .confirm: return .stale(CachedCopy(entry: entry, confirming: true))
    }
    // The stored facts are judged against this caller's policy on every hit.
    switch hitPolicy.verdict(on: entry.record) {
    case .serve:
      guard entry.isFresh(at: now) else { return .stale(CachedCopy(entry: entry)) }
      tier.touch(entry, now: now)
      return .hit(answer(entry, url: url, source: .cache, start: start))
    case .refuse(let error):
      // A stale refused copy is still revalidated: the server may have changed the file.
      return entry.isFresh(at: now) ? .refused(error) : .stale(CachedCopy(entry: entry))
    case .undecided:
      return .miss
    }
  }

  /// The request after its lookup. `lookedUpAt` is the flights' generation read before that
  /// lookup, when known: when a fetch of `url` finished since then, the cache is looked up
  /// again rather than the file fetched again.
  func attachment(
    for url: AttachmentURL, after lookup: Lookup, deadline: ContinuousClock.Instant,
    start: ContinuousClock.Instant, lookedUpAt: UInt64? = nil
  ) async throws(AttachmentError) -> Attachment {
    let url = keyed(url)
    let stale: CacheEntry?
    var confirming = false
    switch lookup {
    case .hit(let attachment): return attachment
    case .refused(let error): throw error
    case .stale(let copy) where copy.entry.record.url == url.key.normalized:
      stale = copy.entry
      confirming = copy.confirming
    case .stale:
      // Another URL's copy: never revalidated (or refreshed) under this one.
      return try await attachment(for: url, after: self.lookup(url), deadline: deadline, start: start)
    case .miss: stale = nil
    }
    // A miss that cannot start is answered here, without a task, a body file or the engine:
    // at once, however busy the process is.
    if Task.isCancelled { throw AttachmentError.cancelledError() }
    guard ContinuousClock.now < deadline else {
      throw AttachmentError(.deadlineExceeded, "The deadline passed before the download started.")
    }
    var since = lookedUpAt
    while true {
      // A call that joins a fetch already under way shares it, and with it the deadline of
      // the call that started it. When that earlier deadline ends the shared fetch, a call
      // whose own deadline is later fetches again (or joins whoever does) instead of
      // answering with someone else's deadline.
      // Callers share a fetch only when they asked for the same URL: one whose key leaves a
      // signature out must not be answered with another caller's fetch.
      let run = await flights.run(callerKey(url), deadline: deadline, unlessFinishedSince: since) {
        [self, confirming] phase in
        await self.miss(
          url: url, stale: stale, deadline: deadline, start: start, phase: phase, confirming: confirming)
      }
      since = nil
      guard let outcome = run else {
        // A fetch of this URL finished after the lookup: what it published is looked up.
        let generation = flights.generation
        return try await attachment(
          for: url, after: self.lookup(url), deadline: deadline, start: start, lookedUpAt: generation)
      }
      if case .failure(let error) = outcome, error.code == .deadlineExceeded, ContinuousClock.now < deadline,
        !Task.isCancelled
      {
        continue
      }
      let answer = try outcome.get()
      if url.key.droppedParameters, !url.keyRules.patterns.isEmpty {
        // The origin has just answered this URL: it is confirmed for its lifetime.
        let now = FileSystem.now()
        let lifetime = stale.map { max($0.record.freshUntil, now + 60) } ?? now + 60
        confirmations.remember(url.text, until: PresignedExpiry.expiry(of: url.text) ?? lifetime)
      }
      return answer
    }
  }

  /// `url` with the cache key this pipeline files it under (its configuration's
  /// ``CacheConfiguration/keyRules`` applied, in `profile`'s key space): what a face keys its
  /// own per-URL state by, so that it meets the pipeline's and no two profiles share it. Cheap
  /// when there are no rules or the URL was keyed already.
  package func keyed(_ url: AttachmentURL, profile: AttachmentProfile = .ios) -> AttachmentURL {
    let rules = configuration.cache.keyRules
    return url.keyed(by: profile.isIdentity ? rules : rules.inVariant(profile.name))
  }

  /// The key per-caller state of `url` is kept under (a face's memos and admission, the
  /// pipeline's shared fetches): the cache key when the key is the whole URL, else the key of
  /// the exact URL (in the profile's key space), so that no caller is answered with what another
  /// caller's URL fetched or was refused (``HitConfirmation``). `url` must be keyed already
  /// (``keyed(_:profile:)``).
  package func callerKey(_ url: AttachmentURL) -> URLKey {
    guard url.key.droppedParameters, !url.keyRules.patterns.isEmpty, url.keyRules.confirmsHits else {
      return url.key
    }
    var exact = CacheKeyRules.none
    exact.variant = url.keyRules.variant
    return url.keyed(by: exact).key
  }

  /// The pipeline that answers requests of `profile`: this one for ``AttachmentProfile/ios``
  /// (the configuration as it is), else one made on first use with the profile's configuration
  /// (``AttachmentProfile/applied(to:)``) over the same cache directory, kept for the process.
  /// - Throws: `io_error` when its cache cannot be opened.
  func profiled(_ profile: AttachmentProfile) throws(AttachmentError) -> AttachmentPipeline {
    if profile.isIdentity { return self }
    if let made = profiles.withLock({ $0[profile] }) { return made }
    let made = try AttachmentPipeline(
      configuration: profile.applied(to: configuration), observer: observer, store: store)
    // Two first uses at once: the first one stored is the one every caller shares.
    return profiles.withLock { profiles in
      if let first = profiles[profile] { return first }
      profiles[profile] = made
      return made
    }
  }

  /// The attachment for `url` if the cache holds a fresh, size-checked copy that this
  /// pipeline's policy accepts, without any network, task or thread: the cheapest possible
  /// answer. `nil` means ask ``attachment(for:deadline:)`` (which also gives the
  /// refusal when the policy refuses the cached copy).
  public func cachedAttachment(for url: String) -> Attachment? {
    guard let checked = try? AttachmentURL(url) else { return nil }
    return cachedAttachment(for: checked)
  }

  /// ``cachedAttachment(for:)-(String)`` for a URL checked already: the hit of
  /// ``lookup(_:)``.
  public func cachedAttachment(for url: AttachmentURL) -> Attachment? {
    if case .hit(let attachment) = lookup(url) { return attachment }
    return nil
  }

  /// Tells the pipeline the caller is done with the file of an attachment the origin marked
  /// `no-store` (``Attachment/freshUntil`` is `nil`), or `private` to a shared cache
  /// (``Attachment/isUnindexed``): the file, kept outside the index for this
  /// answer only, is removed and its bytes leave the cache's size count. For any other
  /// attachment (cached content, which other callers share) nothing happens. Without a release
  /// such a file counts against ``CacheConfiguration/maximumBytes`` until a sweep removes it
  /// after ``CacheConfiguration/gracePeriodSeconds``.
  ///
  /// Open the file first: an open descriptor keeps reading the bytes after the release. Calls
  /// for one URL that ran at once shared one fetch and so one file; a sharer that opens it
  /// after another's release finds it gone (and may ask again).
  /// - Returns: whether a file was removed.
  @discardableResult
  public func release(_ attachment: Attachment) -> Bool {
    guard attachment.freshUntil == nil || attachment.isUnindexed, attachment.source == .network else {
      return false
    }
    return tier.releaseUnindexed(attachment.path)
  }

  /// How many fetches have finished, as the single flight counts them (tests: to replay a
  /// lookup made before one finished).
  var flightGeneration: UInt64 { flights.generation }

  /// How many calls for `url` wait on one fetch now (tests: to know a call has joined).
  func callersWaiting(for url: AttachmentURL) -> Int { flights.waiting(for: url.key) }

  /// An answer from a cache entry.
  func answer(
    _ entry: CacheEntry, url: AttachmentURL, source: Attachment.Source, start: ContinuousClock.Instant
  ) -> Attachment {
    Attachment(
      url: url.redacted, path: entry.path, validation: entry.record.validation, source: source,
      isStale: false, bytesTransferred: 0, transferTimings: nil,
      totalMicroseconds: Self.microseconds(since: start), freshUntil: entry.record.freshUntil,
      lastModified: entry.record.lastModified, cacheControl: entry.record.cacheControl,
      fetchedAt: entry.record.fetchedAt)
  }

  /// Microseconds from `start` to now.
  static func microseconds(since start: ContinuousClock.Instant) -> Int64 {
    (ContinuousClock.now - start).wholeMicroseconds
  }
}
