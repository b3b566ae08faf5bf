import TestTraits
import Testing

@testable import AttachmentKit
@testable import AttachmentServer

/// The `Cache-Control` serve gives a file answer, as a value: a copy of a known age (received
/// at a set instant, answered at another), so the lifetimes passed on are exact.
@Suite("serve Cache-Control as a value", .threadOfItsOwn)
struct CacheControlPolicyTests {
  /// When the copy was received (any instant: the policy reads no clock of its own).
  static let received = 1_800_000_000.0

  /// A copy of a GIF received at ``received`` with the origin's `cacheControl`, kept by serve
  /// (a shared cache) for `ownLifetime` seconds.
  static func copy(_ cacheControl: String, ownLifetime: Double) -> AttachmentKit.Attachment {
    let validation = Validation(
      type: .gif, detectedMIME: "image/gif", bytes: 100, sha256: String(repeating: "a", count: 64), width: 1,
      height: 1, frames: 1, durationSeconds: nil, warnings: [])
    return AttachmentKit.Attachment(
      url: "https://origin.example/a.gif", path: "/cache/a.gif", validation: validation, source: .cache,
      isStale: false, bytesTransferred: 0, transferTimings: nil, totalMicroseconds: 0,
      freshUntil: received + ownLifetime, lastModified: nil, cacheControl: cacheControl, fetchedAt: received)
  }

  @Test("s-maxage is passed on less the copy's age, to the second, as max-age is")
  func sharedLifetimeLessTheAge() {
    // Origin: max-age=600, s-maxage=7200. serve's own copy lives by s-maxage.
    let both = Self.copy("max-age=600, s-maxage=7200", ownLifetime: 7200)
    #expect(CacheControlPolicy.header(for: both, now: Self.received) == "public, max-age=600, s-maxage=7200")
    #expect(
      CacheControlPolicy.header(for: both, now: Self.received + 100.5) == "public, max-age=499, s-maxage=7099"
    )
    // The device's max-age spent: revalidate, whatever is left for the tier.
    #expect(CacheControlPolicy.header(for: both, now: Self.received + 600.5) == "max-age=0, must-revalidate")
    // s-maxage alone: the device's max-age is what is left of serve's own copy.
    let sharedOnly = Self.copy("s-maxage=3600, must-revalidate", ownLifetime: 3600)
    #expect(
      CacheControlPolicy.header(for: sharedOnly, now: Self.received + 1_000)
        == "public, max-age=2600, s-maxage=2600, must-revalidate")
    // An s-maxage the copy has outlived while max-age still has time: 0, never negative.
    let shortShared = Self.copy("max-age=600, s-maxage=60, proxy-revalidate", ownLifetime: 60)
    #expect(
      CacheControlPolicy.header(for: shortShared, now: Self.received + 100)
        == "public, max-age=500, s-maxage=0, proxy-revalidate")
  }
}
