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
  /// What the lookup and the miss path store answers in: ``cache`` unless a test put another
  /// tier in front of it (see ``CacheTier``).
  let tier: any CacheTier
  let validator: Validator
  let hitPolicy: HitPolicy
  let downloaderBox: LazyDownloader
  private let flights = SingleFlight<URLKey, Attachment>()
  let observer: StageObserver?
  /// How often this pipeline's downloaded bodies were identified (once per miss; for tests).
  let identifications = IdentificationTally()

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
    tier: ((AttachmentCache) -> any CacheTier)? = nil
  ) throws(AttachmentError) {
    self.configuration = configuration
    self.observer = observer
    let cache = try AttachmentCache(configuration: configuration.cache)
    self.cache = cache
    self.tier = tier?(cache) ?? cache
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
  ///   - reload: skip the cache lookup and download again (the result still refreshes the
  ///     cache), like a browser's reload.
  /// - Returns: the ``Attachment``, whose ``Attachment/source`` says whether it came from the
  ///   network, the cache, or the cache after a `304`.
  /// - Throws: ``AttachmentError``: the fetch codes (`invalid_url`, `dns_failed`,
  ///   `http_status`, `deadline_exceeded`, `cancelled`, …) when the file could not be
  ///   fetched; the validation codes (`unsupported_type`, `too_large`, `too_long`,
  ///   `too_many_pixels`, `truncated`, `empty`) when its bytes are not an acceptable
  ///   attachment; `io_error` when the cache cannot be written.
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
    // Read before the lookup: a fetch of this URL that finishes between the lookup and the
    // flight is seen, and its answer looked up, instead of fetching the file a second time.
    let generation = flights.generation
    return try await attachment(
      for: url, after: lookup(url, reload: reload), deadline: deadline, start: start,
      lookedUpAt: reload ? nil : generation)
  }

  /// What the cache holds for `url` under this pipeline's policy, without any network, task or
  /// thread: the one cache lookup of a request. A hit is marked used (the LRU clock).
  ///
  /// - Parameters:
  ///   - url: the URL, checked already.
  ///   - reload: skip the cache (the answer is ``Lookup/miss``), like a browser's reload.
  /// - Returns: a hit or a refusal (the answer already), a stale copy to revalidate, or a miss.
  public func lookup(_ url: AttachmentURL, reload: Bool = false) -> Lookup {
    let start = ContinuousClock.now
    let url = keyed(url)
    let origins = configuration.downloader.allowedOrigins
    // A copy stored before the allowlist changed is not answered for an origin now refused.
    if !origins.isEmpty, !origins.allows(url.text) {
      return .refused(origins.refusal(url.text, redirect: false))
    }
    guard !reload, let entry = tier.entry(for: url.key) else { return .miss }
    // A shared cache serves no private answer, even one a private user of the same directory
    // (a command's fetch) stored there: it is fetched for this caller, and not kept.
    if configuration.cache.isShared, Freshness.isPrivate(entry.record.cacheControl) { return .miss }
    let now = FileSystem.now()
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

  /// Continues a request from its ``lookup(_:reload:)`` of the same `url`: answers a hit or a
  /// refusal at once, and otherwise fetches (revalidating a stale copy; a stale copy of another
  /// URL is looked up again instead), with the results and errors of
  /// ``attachment(for:deadline:reload:)-(AttachmentURL,_,_)``. Looking up and then calling
  /// this costs one cache lookup in all.
  public func attachment(
    for url: AttachmentURL, after lookup: Lookup, deadline: ContinuousClock.Instant
  ) async throws(AttachmentError) -> Attachment {
    try await attachment(for: url, after: lookup, deadline: deadline, start: .now)
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
    switch lookup {
    case .hit(let attachment): return attachment
    case .refused(let error): throw error
    case .stale(let copy) where copy.entry.record.url == url.key.normalized: stale = copy.entry
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
      let run = await flights.run(url.key, deadline: deadline, unlessFinishedSince: since) { [self] in
        await self.miss(url: url, stale: stale, deadline: deadline, start: start)
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
      return try outcome.get()
    }
  }

  /// `url` with the cache key this pipeline files it under (its configuration's
  /// ``CacheConfiguration/keyRules`` applied): what a face keys its own per-URL state by, so
  /// that it meets the pipeline's. Cheap when there are no rules or the URL was keyed already.
  public func keyed(_ url: AttachmentURL) -> AttachmentURL { url.keyed(by: configuration.cache.keyRules) }

  /// The attachment for `url` if the cache holds a fresh, size-checked copy that this
  /// pipeline's policy accepts, without any network, task or thread: the cheapest possible
  /// answer. `nil` means ask ``attachment(for:deadline:reload:)`` (which also gives the
  /// refusal when the policy refuses the cached copy).
  public func cachedAttachment(for url: String) -> Attachment? {
    guard let checked = try? AttachmentURL(url) else { return nil }
    return cachedAttachment(for: checked)
  }

  /// ``cachedAttachment(for:)-(String)`` for a URL checked already: the hit of
  /// ``lookup(_:reload:)``.
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
