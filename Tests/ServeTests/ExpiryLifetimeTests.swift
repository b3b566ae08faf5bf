import TestTraits
import Testing

@testable import AttachmentServer

/// An expiring path's answer is not kept past its expiry.
@Suite("expiring answers' lifetime", .threadOfItsOwn)
struct ExpiryLifetimeTests {
  @Test("max-age and s-maxage are cut to the seconds left; other directives and shorter lifetimes kept")
  func capped() {
    #expect(ExpiryLifetime.capped("public, max-age=86400", secondsLeft: 600) == "public, max-age=600")
    #expect(
      ExpiryLifetime.capped("public, max-age=60, s-maxage=7200, must-revalidate", secondsLeft: 600)
        == "public, max-age=60, s-maxage=600, must-revalidate")
    #expect(ExpiryLifetime.capped("public, max-age=30", secondsLeft: 600) == "public, max-age=30")
    #expect(ExpiryLifetime.capped("no-store", secondsLeft: 600) == "no-store")
    #expect(ExpiryLifetime.capped("private, max-age=900", secondsLeft: -5) == "private, max-age=0")
    let path = ProxyPath(
      route: .attachment, signature: "ab", expiry: 1_000, payload: .url("https://a.example/x"))
    #expect(
      ExpiryLifetime.headers([("Cache-Control", "public, max-age=3600")], route: .proxy(path), now: 900)[0].1
        == "public, max-age=100")
    #expect(
      ExpiryLifetime.headers(
        [("Cache-Control", "public, max-age=3600")],
        route: .attachment(url: "https://a.example/x", signature: "ab"),
        now: 900)[0].1 == "public, max-age=3600")
  }
}
