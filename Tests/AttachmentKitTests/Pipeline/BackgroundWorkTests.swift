import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Long background jobs hold back nothing else: with as many busy checks as the machine has
/// cores, another request's check starts at once and a download's deadline timer still fires.
/// (On libdispatch's concurrent queues, as wide as the cores on Linux and grown only for blocked
/// threads, both waited until a busy job ended.)
@Suite("Background work: long jobs hold back nothing", .threadOfItsOwn)
struct BackgroundWorkTests {
  @Test("with two checks busy for seconds, a third starts at once and a 500 ms deadline fires on time")
  func busyChecksHoldNothingBack() async throws {
    // Given two checks that keep a core each busy until released (at the latest 60 s from
    // now, so that a starved answer comes then instead of never)
    let release = Flag()
    let spinning = Locked(0)
    let releaser = DispatchWorkItem { release.set() }
    DispatchQueue(label: "release").asyncAfter(deadline: .now() + 60, execute: releaser)
    let busy = (0..<2).map { _ in
      Task {
        await OffPoolWork.run(deadline: .now + .seconds(30)) { _ in
          spinning.withLock { $0 += 1 }
          var turns = 0
          while !release.isSet { turns &+= 1 }
          return turns
        }
      }
    }
    #expect(await poll(upTo: eventWait) { spinning.withLock { $0 } == 2 }, "the busy checks never started")

    // When another check is asked for, and a download whose server never answers has 500 ms
    let start = ContinuousClock.now
    let quick = await OffPoolWork.run(deadline: .now + .seconds(5)) { _ in ContinuousClock.now }
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    let scratch = try ScratchDirectory("busy-checks")
    defer { scratch.remove() }
    let downloadStart = ContinuousClock.now
    var code: AttachmentError.Code?
    do {
      _ = try await Downloader(configuration: .loopback).download(
        DownloadRequest(url: server.url("/fault/never"), directory: scratch.path), timeout: .milliseconds(500)
      )
    } catch {
      code = error.code
    }
    let answered = ContinuousClock.now
    release.set()
    releaser.cancel()
    for job in busy { _ = await job.value }

    // Then the check ran at once and the deadline was kept, both long before the busy checks
    // were released
    #expect(quick - start < deadlineMargin, "the check waited \(quick - start) behind the busy ones")
    #expect(code == .deadlineExceeded)
    #expect(
      answered - downloadStart < .milliseconds(500) + deadlineMargin,
      "the 500 ms deadline was answered after \(answered - downloadStart)")
  }
}
