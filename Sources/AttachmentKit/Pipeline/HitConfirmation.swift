import PosixLock

/// Key by object, authorize by request (issue 52): when a key rule leaves a URL's signature out
/// of its cache key (``CacheKeyRules``), two callers with different URLs meet at one entry, and
/// a shared cache must still ask whether *this* caller may have the object. A hit whose entry
/// was fetched (or last confirmed) with another URL than the caller's is confirmed with the
/// origin first, with the caller's own URL: a conditional request (`If-None-Match` with the
/// stored `ETag`, else `If-Modified-Since`), as a revalidation is. `304` delivers the cached
/// file; a refusal (`401`, `403`, `404`, `410`, …) is the caller's, and no stale copy stands in;
/// `200` replaces the entry. A presigned URL past its own expiry is refused without a request.
///
/// A URL confirmed is remembered for its own lifetime (``PresignedExpiry``, else the entry's
/// freshness), so the devices of a campaign that share one URL cost one confirmation. The
/// decision is a value (``Verdict``); ``AttachmentPipeline`` performs it.
enum HitConfirmation {
  /// What a lookup does with an entry for `url`.
  enum Verdict: Equatable {
    /// The caller's URL is the one the entry was fetched or confirmed with (or was confirmed
    /// lately): the entry answers as usual.
    case answer
    /// Ask the origin first, with the caller's URL.
    case confirm
    /// The caller's presigned URL has expired: this is the answer.
    case refuse(AttachmentError)
  }

  /// The verdict on answering `url` (keyed) from an entry whose record keeps `source` (the URL
  /// it was fetched or confirmed with, when it is not the key), at `now` (seconds since 1970).
  static func verdict(
    for url: AttachmentURL, recordSource: String?, confirmed: ConfirmedRequests, now: Double
  ) -> Verdict {
    // No rule leaves a parameter out: the key is the whole URL, and only that URL meets it.
    // (or the operator said every object is public: `confirm:off-objects-are-public`).
    if url.keyRules.patterns.isEmpty || !url.keyRules.confirmsHits { return .answer }
    let source = url.key.droppedParameters ? url.text : nil
    // The URL the entry knows, or no parameter left out on either side: nothing to ask.
    if source == recordSource { return .answer }
    if let expired = PresignedExpiry.refusal(of: url, now: now) { return .refuse(expired) }
    return confirmed.holds(url.text, now: now) ? .answer : .confirm
  }
}

/// The URLs the origin confirmed lately, each until its own expiry: a bounded memo (the oldest
/// go first past ``capacity``), per pipeline.
final class ConfirmedRequests: Sendable {
  /// The most URLs remembered at once.
  static let capacity = 4096

  private struct State {
    var until: [String: Double] = [:]
    var order: [String] = []
  }

  private let state = Locked(State())

  /// Whether `url` was confirmed and its confirmation still holds at `now`.
  func holds(_ url: String, now: Double) -> Bool {
    state.withLock { ($0.until[url] ?? 0) > now }
  }

  /// Remembers that the origin confirmed `url`, until `until` (seconds since 1970).
  func remember(_ url: String, until: Double) {
    state.withLock { state in
      if state.until.updateValue(until, forKey: url) == nil { state.order.append(url) }
      while state.order.count > Self.capacity {
        state.until[state.order.removeFirst()] = nil
      }
    }
  }
}
