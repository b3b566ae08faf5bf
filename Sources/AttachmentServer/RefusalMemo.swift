import AttachmentKit
import PosixLock

/// Refusals and upstream failures remembered for a short time (a negative cache): every device
/// of a campaign with one bad asset asks for it within seconds, and without the memo each ask
/// is a fetch from the origin.
///
/// An entry is keyed by the cache key's bytes (``AttachmentURL/normalized`` as UTF-8, compared
/// byte for byte, never by `String` equality, which would merge canonically equivalent URLs the
/// cache keeps apart) and holds the validation limits it was refused under: it answers only a
/// caller with the same limits. A refused file (`422`) is remembered for
/// ``rejectionLifetime``, an upstream failure (`502`, `504`) for ``failureLifetime``; nothing
/// else (a request's own errors cost no fetch). The tier is told the same through
/// `Cache-Control: max-age` on the answer (what is left of the entry).
final class RefusalMemo: Sendable {
  private struct Entry {
    var error: AttachmentError
    var limits: ValidationLimits
    var until: Double
  }

  /// How long a refused file is remembered, in seconds.
  static let rejectionLifetime = 30.0
  /// How long an upstream failure is remembered, in seconds.
  static let failureLifetime = 5.0
  /// The most URLs remembered; past it expired entries go, then all.
  static let capacity = 4096

  private let entries = Locked<[URLKey: Entry]>([:])

  /// How long `error` is remembered, or `nil` when it is not (not a refusal of the file nor a
  /// failure of the upstream).
  static func lifetime(of error: AttachmentError) -> Double? {
    switch error.kind {
    case .rejection: rejectionLifetime
    case .fetch: failureLifetime
    case .request, .proxy, .local: nil
    }
  }

  /// The remembered refusal of `key` for a caller with `limits`, and the whole seconds it has
  /// left; `nil` when there is none (or it expired).
  func refusal(_ key: URLKey, limits: ValidationLimits, now: Double) -> (error: AttachmentError, left: Int)? {
    entries.withLock { entries in
      guard let entry = entries[key] else { return nil }
      guard now < entry.until else {
        entries[key] = nil
        return nil
      }
      guard entry.limits == limits else { return nil }
      return (entry.error, max(1, Int(entry.until - now)))
    }
  }

  /// Remembers `error` for `key` under `limits` when it is a kind remembered.
  func remember(_ key: URLKey, _ error: AttachmentError, limits: ValidationLimits, now: Double) {
    guard let lifetime = Self.lifetime(of: error) else { return }
    let entry = Entry(error: error, limits: limits, until: now + lifetime)
    entries.withLock { entries in
      if entries.count >= Self.capacity {
        entries = entries.filter { now < $0.value.until }
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
      }
      entries[key] = entry
    }
  }
}

extension Reply {
  /// The error answer of a remembered refusal: the tier may keep it for the `seconds` the memo
  /// has left (`Cache-Control: public, max-age=N` instead of `no-store`).
  static func remembered(_ error: AttachmentError, url: String?, seconds: Int) -> Reply {
    var reply = Reply.error(error, url: url)
    reply.headers = reply.headers.map { name, value in
      name == "Cache-Control" ? (name, "public, max-age=\(seconds)") : (name, value)
    }
    return reply
  }
}

extension AttachmentServer {
  /// The answer of a refusal the memo holds for `url` (checked before the cache lookup: a
  /// remembered refusal costs neither a lookup nor a fetch), or `nil`.
  func rememberedReply(_ url: AttachmentURL, kind: ProxyRoute.Answer, now: Double) -> Reply? {
    guard
      let refused = refusalMemo.refusal(
        pipeline.callerKey(url), limits: pipeline.configuration.limits, now: now)
    else { return nil }
    switch kind {
    case .info: return infoReply(url.redacted, .failure(refused.error))
    case .file: return .remembered(refused.error, url: url.redacted, seconds: refused.left)
    }
  }

  /// The answer of a pipeline call that failed: remembered (and so kept by the tier for as
  /// long) when the memo took it, else `no-store`. An answer deadline of the request's own
  /// (`X-Deadline-Ms`) is no refusal the memo took, and stays `no-store`.
  func errorReply(_ error: AttachmentError, url: AttachmentURL, key: URLKey) -> Reply {
    if let refused = refusalMemo.refusal(key, limits: pipeline.configuration.limits, now: HitMemo.now()),
      refused.error.code == error.code
    {
      return .remembered(error, url: url.redacted, seconds: refused.left)
    }
    return .error(error, url: url.redacted)
  }
}
