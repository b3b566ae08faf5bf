import TestTraits
import Testing

@testable import AttachmentKit

/// Freshness for a shared cache (RFC 9111 §3.5, §4.2.1), as `attachkit serve`'s cache is: a
/// `private` answer is not kept, `s-maxage` sets the lifetime; a private cache ignores both.
@Suite("Freshness of a shared cache", .cpuBound)
struct SharedFreshnessTests {
  let now = 1_800_000_000.0

  func policy(_ cc: String, shared: Bool) -> Freshness.Policy {
    Freshness.policy(
      cacheControl: cc, expires: nil, date: HTTPDate.format(now), lastModified: nil, now: now,
      defaultLifetime: 99, shared: shared)
  }

  @Test("private: kept by a private cache, delivered but not kept by a shared one (its lifetime kept)")
  func privateAnswers() {
    #expect(!policy("private, max-age=600", shared: false).isPrivateToSharedCache)
    let shared = policy("private, max-age=600", shared: true)
    #expect(shared.isPrivateToSharedCache)
    #expect(!shared.noStore)
    #expect(shared.lifetime == 600)
    #expect(policy("Private=\"Set-Cookie\", max-age=5", shared: true).isPrivateToSharedCache)
  }

  @Test("s-maxage: the shared cache's lifetime over max-age and Expires; no-cache still wins; no-store stays")
  func sharedMaxAge() {
    #expect(policy("max-age=600, s-maxage=2", shared: false).lifetime == 600)
    #expect(policy("max-age=600, s-maxage=2", shared: true).lifetime == 2)
    #expect(policy("s-maxage=7200, max-age=60", shared: true).lifetime == 7200)
    #expect(policy("no-cache, s-maxage=60", shared: true).lifetime == 0)
    #expect(policy("no-store, s-maxage=60", shared: true).noStore)
  }
}
