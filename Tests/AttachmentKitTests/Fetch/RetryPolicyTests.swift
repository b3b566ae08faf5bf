import TestTraits
import Testing

@testable import AttachmentKit

/// The retry decisions as a value: no socket, no clock.
@Suite("Retry policy", .cpuBound)
struct RetryPolicyTests {
  private static let now = ContinuousClock.now
  private static let deadline = now + .seconds(3)
  private static let wallClock = 1_700_000_000.0
  private static let resumable = ResponseHeaders([
    (name: "ETag", value: "\"v1\""), (name: "Accept-Ranges", value: "bytes"),
  ])

  private static func decide(
    _ cause: RetryPolicy.Cause, retries: Int = 1, attempts: Int = 1, bytes: Int64 = 0,
    head: ResponseHeaders? = nil, now: ContinuousClock.Instant = now
  ) -> RetryPolicy.Decision {
    RetryPolicy(retries: retries).decide(
      after: cause, attempts: attempts, bodyBytes: bytes, bodyHead: head, now: now, deadline: deadline,
      wallClock: wallClock)
  }

  @Test("a connection failure is retried once at once; the second is the answer")
  func connectionRetriedOnce() {
    #expect(Self.decide(.connection) == .retry(wait: .zero, resume: nil))
    #expect(Self.decide(.connection, attempts: 2) == .giveUp)
    #expect(Self.decide(.connection, retries: 3, attempts: 3) == .retry(wait: .zero, resume: nil))
    #expect(Self.decide(.connection, retries: 0) == .giveUp)
  }

  @Test("a cut body with a strong validator and Accept-Ranges resumes from its last byte")
  func resumes() {
    #expect(
      Self.decide(.connection, bytes: 900, head: Self.resumable)
        == .retry(wait: .zero, resume: .init(offset: 900, ifRange: "\"v1\"")))
    // No bytes yet: nothing to resume
    #expect(Self.decide(.connection, bytes: 0, head: Self.resumable) == .retry(wait: .zero, resume: nil))
  }

  @Test(
    "the validator: a strong ETag, else Last-Modified, and only with Accept-Ranges: bytes",
    arguments: [
      ([("ETag", "\"a\""), ("Accept-Ranges", "bytes")], "\"a\""),
      ([("ETag", "W/\"a\""), ("Accept-Ranges", "bytes")], nil),
      (
        [
          ("ETag", "W/\"a\""), ("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT"), ("Accept-Ranges", "bytes"),
        ],
        "Tue, 01 Dec 2026 10:00:00 GMT"
      ),
      ([("ETag", "\"a\""), ("Accept-Ranges", "none")], nil),
      ([("ETag", "\"a\"")], nil),
    ] as [([(String, String)], String?)])
  func validator(fields: [(String, String)], expected: String?) {
    let headers = ResponseHeaders(fields.map { (name: $0.0, value: $0.1) })
    #expect(RetryPolicy.resumeValidator(headers) == expected)
  }

  @Test("502, 503 and 504 are retried after Retry-After when it ends before the deadline")
  func unavailable() {
    #expect(Self.decide(.unavailable(status: 503, retryAfter: nil)) == .retry(wait: .zero, resume: nil))
    #expect(Self.decide(.unavailable(status: 502, retryAfter: "2")) == .retry(wait: .seconds(2), resume: nil))
    #expect(Self.decide(.unavailable(status: 504, retryAfter: "3")) == .giveUp)
    #expect(Self.decide(.unavailable(status: 503, retryAfter: "30")) == .giveUp)
  }

  @Test("Retry-After as an HTTP date, in the past, or unreadable")
  func retryAfterForms() {
    // 1,700,000,001 s since 1970 is Tue, 14 Nov 2023 22:13:21 GMT: one second after wallClock
    #expect(
      RetryPolicy.delay(retryAfter: "Tue, 14 Nov 2023 22:13:21 GMT", wallClock: Self.wallClock) == .seconds(1)
    )
    #expect(
      RetryPolicy.delay(retryAfter: "Tue, 14 Nov 2023 22:13:19 GMT", wallClock: Self.wallClock) == .zero)
    #expect(RetryPolicy.delay(retryAfter: " 5 ", wallClock: Self.wallClock) == .seconds(5))
    #expect(RetryPolicy.delay(retryAfter: "-5", wallClock: Self.wallClock) == .zero)
    #expect(RetryPolicy.delay(retryAfter: "soon", wallClock: Self.wallClock) == .zero)
  }

  @Test("nothing starts at or past the deadline, and final causes are never retried")
  func neverRetried() {
    #expect(Self.decide(.connection, now: Self.deadline) == .giveUp)
    #expect(Self.decide(.connection, now: Self.deadline + .seconds(1)) == .giveUp)
    #expect(Self.decide(.final, retries: 5) == .giveUp)
  }
}
