import AttachmentKit
import TestTraits
import Testing

@testable import AttachmentServer

/// The refusal memo as a value, on a clock the test sets (every call takes its `now`): how long
/// each kind of refusal is remembered, to the hundredth of a second, whatever the machine's load.
@Suite("serve: the refusal memo as a value", .threadOfItsOwn)
struct RefusalMemoValueTests {
  let limits = ValidationLimits()
  /// Any instant: the memo reads no clock of its own.
  let start = 1_800_000_000.0

  private func key(_ url: String) throws -> URLKey { try AttachmentURL(url).key }

  @Test("an upstream failure (502, 504) is remembered 5 s: there at +4.9 s, gone at +5.01 s")
  func failureLifetime() throws {
    let memo = RefusalMemo()
    let failures = [
      AttachmentError(.httpStatus, "The origin answered 500.", httpStatus: 500),
      AttachmentError(.deadlineExceeded, "The deadline passed."),
    ]
    for (index, failure) in failures.enumerated() {
      let key = try key("https://origin.example/down-\(index).jpg")
      memo.remember(key, failure, limits: limits, now: start)
      let held = memo.refusal(key, limits: limits, now: start + 4.9)
      #expect(held?.error.code == failure.code, "\(failure.code.rawValue) at +4.9 s")
      #expect(held?.left == 1, "\(failure.code.rawValue): the tier may keep it for what is left")
      #expect(
        memo.refusal(key, limits: limits, now: start + 5.01) == nil, "\(failure.code.rawValue) at +5.01 s")
      // Gone for good: an earlier clock does not bring it back (it was dropped).
      #expect(memo.refusal(key, limits: limits, now: start + 1) == nil, "\(failure.code.rawValue)")
    }
  }

  @Test("a refused file (422) is remembered 30 s: there at +29 s, gone at +30.01 s")
  func rejectionLifetime() throws {
    let memo = RefusalMemo()
    let key = try key("https://origin.example/page.jpg")
    let refused = AttachmentError(.unsupportedType, "An HTML page, not an image.", detected: "text/html")
    memo.remember(key, refused, limits: limits, now: start)
    #expect(memo.refusal(key, limits: limits, now: start + 0.5)?.left == 29)
    let late = memo.refusal(key, limits: limits, now: start + 29)
    #expect(late?.error.code == .unsupportedType, "at +29 s")
    #expect(late?.left == 1)
    #expect(memo.refusal(key, limits: limits, now: start + 30.01) == nil, "at +30.01 s")
  }

  @Test("a request's own errors are not remembered; an entry answers only a caller with the same limits")
  func whatIsRemembered() throws {
    let memo = RefusalMemo()
    let key = try key("https://origin.example/x.jpg")
    memo.remember(key, AttachmentError(.invalidURL, "No host."), limits: limits, now: start)
    #expect(memo.refusal(key, limits: limits, now: start) == nil)
    memo.remember(key, AttachmentError(.unsupportedType, "HTML."), limits: limits, now: start)
    var other = limits
    other.maximumImageBytes = limits.maximumImageBytes / 2
    #expect(memo.refusal(key, limits: other, now: start + 1) == nil)
    #expect(memo.refusal(key, limits: limits, now: start + 1)?.error.code == .unsupportedType)
  }
}
