import PosixLock
import Testing

@testable import AttachmentKit

/// The single flight's finish record: a caller that decided to run from what it read before a
/// run of its key finished is told so, and starts nothing.
@Suite("Single flight: runs finished since a caller looked")
struct SingleFlightTests {
  typealias Flights = SingleFlight<String, Int>

  /// Runs `key` with `since`, counting the work's starts in `starts`.
  static func run(
    _ flights: Flights, _ key: String, since: UInt64?, value: Int, starts: Counter
  ) async -> Result<Int, AttachmentError>? {
    await flights.run(key, deadline: .now + .seconds(30), unlessFinishedSince: since) {
      starts.increment()
      return .success(value)
    }
  }

  @Test("a run of the key finished since: nil and no work; another key's finish, or none: the work runs")
  func finishedSince() async throws {
    let flights = Flights()
    let starts = Counter()
    let before = flights.generation
    #expect(try await Self.run(flights, "a", since: before, value: 1, starts: starts)?.get() == 1)
    #expect(starts.value == 1)

    // "a" finished after `before`: the caller is told, and nothing starts
    #expect(await Self.run(flights, "a", since: before, value: 2, starts: starts) == nil)
    #expect(starts.value == 1)
    // "b" never ran: its work runs; and from the current generation, "a" runs again
    #expect(try await Self.run(flights, "b", since: before, value: 3, starts: starts)?.get() == 3)
    #expect(try await Self.run(flights, "a", since: flights.generation, value: 4, starts: starts)?.get() == 4)
    // Without a generation (a caller with nothing read before), it always runs
    #expect(try await Self.run(flights, "a", since: nil, value: 5, starts: starts)?.get() == 5)
    #expect(starts.value == 4)
  }

  @Test(
    "past the remembered finishes a caller is told a run may have finished, never told wrongly that none did")
  func forgottenFinishes() async throws {
    let flights = Flights()
    let starts = Counter()
    let before = flights.generation
    for index in 0..<(Flights.recentFinishes + 1) {
      _ = await Self.run(flights, "other-\(index)", since: nil, value: index, starts: starts)
    }
    // "a" never ran, but what finished after `before` is no longer all remembered
    #expect(await Self.run(flights, "a", since: before, value: 0, starts: starts) == nil)
    // From a generation still covered, "a" runs
    #expect(try await Self.run(flights, "a", since: flights.generation, value: 7, starts: starts)?.get() == 7)
  }
}

/// Callers that join a flight as it finishes: each gets the flight's outcome, none waits for
/// its deadline (the lost wakeup behind one 504 in 200 serve requests for one URL).
@Suite("Single flight: callers joining as the work finishes")
struct SingleFlightJoinTests {
  @Test("2,000 flights whose work ends at once, 8 callers each: every caller gets the outcome")
  func joinersAtTheFinish() async throws {
    let flights = SingleFlight<Int, Int>()
    var late = 0
    var answered = 0
    for round in 0..<2_000 {
      // 60 s: far beyond the microseconds a flight takes, and beyond any queueing of its tasks
      // on a loaded machine (2 s was not: one caller of 16,000 ran after it once); a lost
      // wakeup waits all of it, so the test is slow only when it fails.
      let deadline = ContinuousClock.now + .seconds(60)
      let outcomes = await withTaskGroup(of: Result<Int, AttachmentError>?.self) { group in
        for _ in 0..<8 {
          group.addTask {
            await flights.run(round, deadline: deadline) { .success(round) }
          }
        }
        var outcomes: [Result<Int, AttachmentError>?] = []
        for await outcome in group { outcomes.append(outcome) }
        return outcomes
      }
      for outcome in outcomes {
        if case .success(round) = outcome { answered += 1 } else { late += 1 }
      }
      if late > 0 { break }
    }
    #expect(late == 0, "\(late) callers were not answered by their flight (\(answered) were)")
  }
}

/// A count that work closures bump from any thread.
final class Counter: Sendable {
  private let count = Locked(0)

  func increment() { count.withLock { $0 += 1 } }
  var value: Int { count.withLock { $0 } }
}
