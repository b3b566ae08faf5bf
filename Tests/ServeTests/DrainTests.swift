import Foundation
import TestSupport
import TestTraits
import Testing

/// SIGTERM's drain: fetches nobody waits for are cancelled at once, and the drain as a whole
/// has a bound after which the rest are cut and logged.
@Suite("attachkit serve: bounded drain", .serialized, .threadOfItsOwn)
struct DrainTests {
  @Test(
    "after a 504 at X-Deadline-Ms, SIGTERM cancels the fetch left running (--deadline 60) and exits at once, not at the drain's end"
  )
  func orphanFetchCancelled() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    // The origin never answers, so the fetch left running lasts to its 60 s deadline, and a
    // drain that waited for it would end only at --drain-timeout (20 s): exiting at once comes
    // well before either, however fast or slow this machine.
    let serve = try await ServeProcess(workspace: workspace, ["--deadline", "60", "--drain-timeout", "20"])
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/fault/never"), keyFile: workspace.keyFile)
    let hasty = try #require(RawConnection(port: serve.port))
    hasty.send("GET \(path) HTTP/1.1\r\nHost: t\r\nX-Deadline-Ms: 300\r\nConnection: close\r\n\r\n")
    #expect(await hasty.readUntilClosed(idleSeconds: 5).text.hasPrefix("HTTP/1.1 504"))
    // The fetch goes on: observed at the origin (under load its request may arrive after the
    // 300 ms answer).
    #expect(await eventually(within: 30) { origin.requestCount(path: "/fault/never") == 1 })

    let start = ContinuousClock.now
    serve.stop()
    let exited = await eventually(within: 30) { serve.process.hasEnded }
    let took = ContinuousClock.now - start
    try #require(exited, "serve still running 30 s after SIGTERM")
    #expect(took < deadlineMargin, "exited \(took) after SIGTERM")
    #expect(await serve.exitStatus(endingWithin: 0) == 0)
    let cut = serve.events.first { $0["event"] as? String == "drain_cut" }
    #expect(cut?["cancelledFetches"] as? Int == 1)
    #expect(cut?["cutRequests"] as? Int == 0)
    #expect(!workspace.cacheFiles().contains { $0.contains("tmp/") })
  }

  @Test("--drain-timeout 1: a request still waiting on its origin is cut after 1 s with 503, logged, exit 0")
  func boundedDrain() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace, ["--deadline", "20", "--drain-timeout", "1"])
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/fault/never"), keyFile: workspace.keyFile)
    let patient = try #require(RawConnection(port: serve.port))
    patient.send("GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    #expect(await eventually { origin.requestCount(path: "/fault/never") == 1 })

    let start = Date()
    serve.stop()
    let answer = await patient.readUntilClosed(idleSeconds: 6)
    let answered = Date().timeIntervalSince(start)
    #expect(answer.text.hasPrefix("HTTP/1.1 503"), "\(answer.text.prefix(60))")
    #expect(answer.text.contains("\"overloaded\""))
    #expect(answered >= 0.9 && answered < 2 + deadlineMarginSeconds, "answered after \(answered) s")
    #expect(await serve.exitStatus(endingWithin: 5) == 0)
    let cut = serve.events.first { $0["event"] as? String == "drain_cut" }
    #expect(cut?["cutRequests"] as? Int == 1)
    #expect(cut?["cancelledFetches"] as? Int == 1)
    #expect(serve.events.contains { $0["event"] as? String == "stopped" })
    #expect(!workspace.cacheFiles().contains { $0.contains("tmp/") })
  }
}
