import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

/// The runner's fan-out caps: attachments taken from one payload, and fetches at once.
@Suite("Attachment and concurrent-fetch caps", .threadOfItsOwn)
struct FetchCapTests {
  /// What the paced route saw: requests in flight now, at most, and in all.
  struct Flight: Sendable {
    var inFlight = 0
    var peak = 0
    var arrived = 0
  }

  /// Serves a PNG at `/paced/N.png` for every N, observed and paced so overlap is real:
  ///
  /// - each request first waits (polling, at most 3 s) until `width` requests are in flight
  ///   at once, or until all `expected` requests have arrived: a runner fetching `width` at a
  ///   time reaches exactly `width` whatever the scheduling, and one fetching fewer stalls here
  ///   and fails;
  /// - then it sends the body in 8 pieces 25 ms apart (~200 ms), so a runner fetching more
  ///   than `width` at once has its extra requests arrive while these are still in flight
  ///   (one fetching `width + 1` reaches a peak of `width + 1`).
  static func pacedRoute(
    on server: TestHTTPServer, width: Int, expected: Int, flight: Locked<Flight>
  ) throws {
    let png = Array(fileBytes(Repository.media("png-rgba.png")))
    try #require(png.count > 8)
    server.routePrefix("/paced/") { _, writer in
      flight.withLock { flight in
        flight.inFlight += 1
        flight.arrived += 1
        flight.peak = max(flight.peak, flight.inFlight)
      }
      // A request stops counting just before its last piece is sent: the runner can start the
      // next fetch only once it has that piece, so the count never overlaps by a race.
      var counted = true
      func done() {
        if counted { flight.withLock { $0.inFlight -= 1 } }
        counted = false
      }
      defer { done() }
      var waited = 0
      while waited < 3000 {
        let released = flight.withLock { $0.inFlight >= width || $0.arrived >= expected }
        if released { break }
        guard writer.sleep(milliseconds: 2) else { return }
        waited += 2
      }
      guard
        writer.writeHead(
          status: 200, headers: [("Content-Type", "image/png"), ("Content-Length", String(png.count))])
      else { return }
      let piece = (png.count + 7) / 8
      for start in stride(from: 0, to: png.count, by: piece) {
        let last = start + piece >= png.count
        if last { done() }
        guard writer.write(Array(png[start..<min(start + piece, png.count)])) else { return }
        if !last { guard writer.sleep(milliseconds: 25) else { return } }
      }
    }
  }

  /// A payload naming `count` distinct paced URLs, identifiers `p-1`… in order.
  static func payload(urls count: Int) -> String {
    let items = (1...count).map { #"{"url": "{BASE}/paced/\#($0).png", "id": "p-\#($0)"}"# }
    return #"{"aps": {"alert": "many", "mutable-content": 1}, "attachments": ["#
      + items.joined(separator: ", ") + "]}"
  }

  @Test(
    "30 URLs: the first 10 are taken, at most N fetched at once (default 4), 20 reported skipped",
    arguments: [nil, 2] as [Int?])
  func caps(_ option: Int?) async throws {
    // Given a payload naming 30 URLs, served by the paced route
    let width = option ?? 4
    let fixture = try RunnerFixture("caps")
    defer { fixture.close() }
    let flight = Locked(Flight())
    try Self.pacedRoute(on: fixture.server, width: width, expected: 10, flight: flight)
    let payload = try fixture.write("many.json", Self.payload(urls: 30))

    // When the runner runs it with the default caps (or --max-concurrent-fetches 2)
    let widthOption = option.map { ["--max-concurrent-fetches", String($0)] } ?? []
    let run = try await fixture.runBinary(
      fixture.commonArguments + widthOption + ["--budget", "20", "--trace", payload])

    // Then the first 10 attachments are delivered, in payload order, by the finished extension,
    #expect(run.status == 0, "\(run.standardError)")
    let output = try run.output()
    #expect(output.attachments.map(\.identifier) == (1...10).map { "p-\($0)" })
    #expect(run.standardError.contains("all steps done"))
    // fetched `width` at a time at the server, never more,
    let seen = flight.withLock { $0 }
    #expect(seen.peak == width, "peak \(seen.peak) requests in flight")
    #expect(seen.arrived == 10)
    for index in 1...10 {
      #expect(fixture.server.requestCount(path: "/paced/\(index).png") == 1)
    }
    // and the other 20 never requested, but reported as skipped.
    for index in 11...30 {
      #expect(fixture.server.requestCount(path: "/paced/\(index).png") == 0)
    }
    let skipped = try #require(output.trace?.first { $0.name == "attachments over limit" })
    #expect(skipped.outcome == "skipped")
    #expect(skipped.detail.hasPrefix("20 of 30 skipped: at most 10 a payload"), "\(skipped.detail)")
    #expect(skipped.detail.contains("the first skipped is p-11"))
    print(
      "caps: width \(width), peak \(seen.peak) in flight, \(seen.arrived) requests, \(run.milliseconds) ms")
  }

  @Test("--max-attachments changes the number taken")
  func attachmentOption() async throws {
    let fixture = try RunnerFixture("caps-option")
    defer { fixture.close() }
    let flight = Locked(Flight())
    try Self.pacedRoute(on: fixture.server, width: 3, expected: 3, flight: flight)
    let payload = try fixture.write("many.json", Self.payload(urls: 5))

    let run = await fixture.runInProcess(
      fixture.commonArguments + ["--max-attachments", "3", "--trace", payload])

    let output = try run.output()
    #expect(output.attachments.map(\.identifier) == ["p-1", "p-2", "p-3"])
    #expect(flight.withLock { $0.arrived } == 3)
    #expect(
      output.trace?.first { $0.name == "attachments over limit" }?.detail.hasPrefix("2 of 5 skipped") == true)
  }

  @Test("time will expire with fetches still queued: they are never started, and reported")
  func queuedAtExpiry() async throws {
    // Given 3 hanging URLs fetched one at a time (time-will-expire 5.5 s after the runner's
    // start: its first fetch starts well before that even when its own start is slow; with
    // 2.5 s, a debug runner in a full parallel run had not asked for the first one yet)
    let fixture = try RunnerFixture("caps-queued")
    defer { fixture.close() }
    fixture.server.routePrefix("/hang/") { _, writer in writer.waitForClientToClose() }
    let payload = try fixture.write(
      "p.json",
      #"{"aps": {"alert": "x", "mutable-content": 1}, "attachments": ["{BASE}/hang/1", "{BASE}/hang/2", "{BASE}/hang/3"]}"#
    )

    let run = try await fixture.runBinary(
      fixture.commonArguments + [
        "--max-concurrent-fetches", "1", "--budget", "8", "--expire-margin", "2.5", "--trace", payload,
      ])

    // Then only the first was requested, and the trace says 2 were never started
    #expect(run.status == 0)
    #expect(fixture.server.requestCount(path: "/hang/1") == 1)
    #expect(fixture.server.requestCount(path: "/hang/2") == 0)
    #expect(fixture.server.requestCount(path: "/hang/3") == 0)
    #expect(run.standardError.contains("2 of 3 still queued at time will expire"), "\(run.standardError)")
  }
}
