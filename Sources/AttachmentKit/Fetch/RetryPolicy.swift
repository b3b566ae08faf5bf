/// Whether a failed attempt of a transfer is tried again, when, and from which byte, as a value.
///
/// It does no I/O and reads no clock: ``Transfer`` says what the attempt ended with (a
/// ``Cause``), how many attempts were made and what the body file holds; the policy answers
/// with a ``Decision`` that the engine (``CurlEngine``) performs. Only transient failures are
/// retried — a connection refused or reset, a body cut short, a `502`, `503` or `504` — and
/// only when the retry starts before the deadline: a `Retry-After` wait that would end at or
/// past it is not waited for, and the attempt's own error is the answer.
struct RetryPolicy: Sendable, Equatable {
  /// How many retries follow a failed first attempt (0: none).
  var retries: Int

  /// What an attempt ended with, as far as retrying cares.
  enum Cause: Equatable, Sendable {
    /// The connection failed or closed early: refused, reset, nothing answered, or the body
    /// cut short (libcurl 7, 18, 52, 55, 56).
    case connection
    /// The server answered `status` (502, 503 or 504), with this `Retry-After` value if any.
    case unavailable(status: Int, retryAfter: String?)
    /// Anything else (4xx and other statuses, validation, deadline, cancellation, a blocked
    /// address, TLS): never retried.
    case final
  }

  /// Where a resumed attempt starts: the first byte not yet in the body file, and the strong
  /// validator sent as `If-Range` so the origin answers `206` only for the same entity.
  struct Resume: Equatable, Sendable {
    /// The byte offset in the body the ranged request starts at (`Range: bytes=offset-`).
    var offset: Int64
    /// A strong ETag or a `Last-Modified` date, sent as `If-Range`.
    var ifRange: String
  }

  /// What to do after a failed attempt.
  enum Decision: Equatable, Sendable {
    /// Answer with the attempt's error.
    case giveUp
    /// Start another attempt after `wait` (zero: at once), ranged when `resume` is set,
    /// otherwise from the first byte.
    case retry(wait: Duration, resume: Resume?)
  }

  /// The decision after attempt number `attempts` (1 for the first) ended with `cause`.
  ///
  /// - Parameters:
  ///   - cause: what the attempt ended with.
  ///   - attempts: how many attempts were made, this one included.
  ///   - bodyBytes: how many body bytes the body file holds.
  ///   - bodyHead: the headers of the response those bytes came from, when there are any.
  ///   - now: the present instant.
  ///   - deadline: the request's absolute deadline; no attempt starts at or after it.
  ///   - wallClock: the present time in seconds since 1970, for a `Retry-After` date.
  /// - Returns: ``Decision/giveUp`` when the cause is not transient, the retries are spent, or
  ///   the wait would reach the deadline; otherwise the retry, ranged when the body can resume.
  func decide(
    after cause: Cause, attempts: Int, bodyBytes: Int64, bodyHead: ResponseHeaders?,
    now: ContinuousClock.Instant, deadline: ContinuousClock.Instant, wallClock: Double
  ) -> Decision {
    guard attempts <= retries, now < deadline else { return .giveUp }
    let wait: Duration
    switch cause {
    case .final:
      return .giveUp
    case .connection:
      wait = .zero
    case .unavailable(_, let retryAfter):
      wait = retryAfter.map { Self.delay(retryAfter: $0, wallClock: wallClock) } ?? .zero
    }
    guard now + wait < deadline else { return .giveUp }
    guard bodyBytes > 0, let bodyHead, let validator = Self.resumeValidator(bodyHead) else {
      return .retry(wait: wait, resume: nil)
    }
    return .retry(wait: wait, resume: Resume(offset: bodyBytes, ifRange: validator))
  }

  /// The validator a response lets a body be resumed with: its strong ETag (one that does not
  /// start with `W/`), else its `Last-Modified`, and only when it sent `Accept-Ranges: bytes`.
  static func resumeValidator(_ headers: ResponseHeaders) -> String? {
    guard let ranges = headers["Accept-Ranges"],
      ranges.split(separator: ",").contains(where: { $0.trimmingSpaces.lowercased() == "bytes" })
    else { return nil }
    if let etag = headers.etag, !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
    return headers.lastModified
  }

  /// How long a `Retry-After` value asks to wait: whole seconds, or an HTTP date (relative to
  /// `wallClock`, seconds since 1970). A date in the past or a value neither parses as is no
  /// wait at all.
  static func delay(retryAfter text: String, wallClock: Double) -> Duration {
    let trimmed = text.trimmingSpaces
    if let seconds = Int64(trimmed) { return .seconds(max(0, seconds)) }
    guard let date = HTTPDate.parse(trimmed), date > wallClock else { return .zero }
    return .milliseconds(Int64(((date - wallClock) * 1000).rounded(.up)))
  }
}

extension StringProtocol {
  /// The text without leading and trailing spaces and tabs.
  fileprivate var trimmingSpaces: String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    return String(self.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
  }
}
