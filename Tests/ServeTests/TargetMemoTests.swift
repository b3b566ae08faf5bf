import AttachmentKit
import TestTraits
import Testing

@testable import AttachmentServer

/// The memo of verified targets as a value: what it keeps, for how long, and how much.
@Suite("serve: the memo of verified targets", .threadOfItsOwn)
struct TargetMemoTests {
  private func entry(_ url: String) throws -> TargetMemo.Entry {
    TargetMemo.Entry(
      route: .attachment(url: url, signature: "00"), url: try AttachmentURL(url), kind: .file,
      loggedPath: "/v1/a/-/x")
  }

  @Test(
    "a target verified under the keys in use is kept; a reload, or a verification racing one, keeps nothing")
  func generations() throws {
    let memo = TargetMemo(capacity: 8)
    let before = memo.generation
    memo.remember("/v1/a/00/a", try entry("https://example.com/a.jpg"), verifiedIn: before)
    #expect(memo.entry(for: "/v1/a/00/a")?.url.text == "https://example.com/a.jpg")
    memo.forget()
    #expect(memo.entry(for: "/v1/a/00/a") == nil)
    // Verified before the reload, remembered after it: dropped
    memo.remember("/v1/a/00/b", try entry("https://example.com/b.jpg"), verifiedIn: before)
    #expect(memo.entry(for: "/v1/a/00/b") == nil)
    memo.remember("/v1/a/00/b", try entry("https://example.com/b.jpg"), verifiedIn: memo.generation)
    #expect(memo.entry(for: "/v1/a/00/b") != nil)
  }

  @Test("at most `capacity` targets (then emptied), none longer than 1 KiB")
  func bounds() throws {
    let memo = TargetMemo(capacity: 2)
    let generation = memo.generation
    for name in ["a", "b"] {
      memo.remember("/v1/a/00/\(name)", try entry("https://example.com/\(name).jpg"), verifiedIn: generation)
    }
    #expect(memo.entry(for: "/v1/a/00/a") != nil && memo.entry(for: "/v1/a/00/b") != nil)
    memo.remember("/v1/a/00/c", try entry("https://example.com/c.jpg"), verifiedIn: generation)
    #expect(memo.entry(for: "/v1/a/00/a") == nil && memo.entry(for: "/v1/a/00/b") == nil)
    #expect(memo.entry(for: "/v1/a/00/c") != nil)
    let long = "/v1/a/00/" + String(repeating: "x", count: TargetMemo.longestTarget)
    memo.remember(long, try entry("https://example.com/long.jpg"), verifiedIn: generation)
    #expect(memo.entry(for: long) == nil)
  }
}
