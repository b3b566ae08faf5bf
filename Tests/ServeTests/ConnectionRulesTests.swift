import TestTraits
import Testing

@testable import AttachmentServer

/// The connection timeouts as values: what each kind of client gets, from its TCP progress.
@Suite("serve connection rules as values", .threadOfItsOwn)
struct ConnectionRulesTests {
  let rules = ConnectionRules(idleTimeout: 1, headTimeout: 2, minimumBytesPerSecond: 100)

  private func progress(received: UInt64, acknowledged: UInt64 = 0, sinceData: UInt32 = 0) -> TCPProgress {
    TCPProgress(received: received, acknowledged: acknowledged, millisecondsSinceData: sinceData)
  }

  @Test("a byte a second is too slow after a second; 200 B/s that never ends passes its head deadline")
  func heads() {
    var trickle = ConnectionRules.Track(now: 0)
    #expect(rules.judge(&trickle, progress: progress(received: 1), now: 0.2) == nil)
    #expect(rules.judge(&trickle, progress: progress(received: 1, sinceData: 800), now: 1.0) == nil)
    #expect(rules.judge(&trickle, progress: progress(received: 2), now: 1.3) == .tooSlow)

    var steady = ConnectionRules.Track(now: 0)
    var verdicts: [ConnectionRules.Cut?] = []
    for tick in 1...13 {
      let now = Double(tick) * 0.2
      verdicts.append(rules.judge(&steady, progress: progress(received: UInt64(tick * 40)), now: now))
    }
    #expect(verdicts.prefix(10).allSatisfy { $0 == nil })
    #expect(verdicts.last == .headDeadline)
  }

  @Test(
    "a kept-alive connection's next head is judged on its own bytes: a fast, big first request does not pay for a trickle"
  )
  func keptAliveTrickle() {
    // The first request: a 60 kB head in a tenth of a second, answered.
    var kept = ConnectionRules.Track(now: 0)
    #expect(rules.judge(&kept, progress: progress(received: 60_000), now: 0.1) == nil)
    kept.begin(.working, now: 0.1, progress: progress(received: 60_000))
    kept.begin(.sending, now: 0.2, progress: progress(received: 60_000))
    #expect(rules.judge(&kept, progress: progress(received: 60_000, acknowledged: 5_000), now: 0.3) == nil)
    // Kept alive, the next head trickles in at a byte a second: too slow once a second has
    // passed since its first byte, however many bytes the connection carried before.
    kept.begin(.awaitingHead, now: 0.4, progress: progress(received: 60_000, acknowledged: 5_000))
    #expect(rules.judge(&kept, progress: progress(received: 60_001, acknowledged: 5_000), now: 0.6) == nil)
    #expect(
      rules.judge(&kept, progress: progress(received: 60_001, acknowledged: 5_000, sinceData: 800), now: 1.4)
        == nil)
    #expect(
      rules.judge(&kept, progress: progress(received: 60_002, acknowledged: 5_000), now: 1.7) == .tooSlow)
    // Its deadline too runs from its own first byte, not the connection's.
    var steady = ConnectionRules.Track(now: 0)
    steady.begin(.awaitingHead, now: 10, progress: progress(received: 60_000, acknowledged: 5_000))
    #expect(rules.judge(&steady, progress: progress(received: 60_200, acknowledged: 5_000), now: 11) == nil)
    #expect(rules.judge(&steady, progress: progress(received: 60_400, acknowledged: 5_000), now: 12) == nil)
    #expect(
      rules.judge(&steady, progress: progress(received: 60_600, acknowledged: 5_000), now: 13.2)
        == .headDeadline)
  }

  @Test("an answer read slowly but steadily is never idle; one not read at all is, after the idle timeout")
  func answers() {
    var reader = ConnectionRules.Track(now: 0)
    reader.begin(.sending, now: 0, progress: progress(received: 300))
    for tick in 1...50 {
      let seen = progress(received: 300, acknowledged: UInt64(tick) * 80_000)
      #expect(rules.judge(&reader, progress: seen, now: Double(tick) * 0.5) == nil)
    }
    let stalled = progress(received: 300, acknowledged: 4_000_000)
    #expect(rules.judge(&reader, progress: stalled, now: 25.5) == nil)
    #expect(rules.judge(&reader, progress: stalled, now: 26.6) == .idle)
  }

  @Test("waiting for the pipeline is never cut; a kept-alive connection with nothing to say is idle")
  func waiting() {
    var working = ConnectionRules.Track(now: 0)
    working.begin(.working, now: 0, progress: progress(received: 300))
    #expect(rules.judge(&working, progress: progress(received: 300), now: 100) == nil)
    var kept = ConnectionRules.Track(now: 0)
    kept.begin(.awaitingHead, now: 0, progress: progress(received: 300, acknowledged: 1000))
    #expect(rules.judge(&kept, progress: progress(received: 300, acknowledged: 1000), now: 0.9) == nil)
    #expect(rules.judge(&kept, progress: progress(received: 300, acknowledged: 1000), now: 1.1) == .idle)
  }
}
