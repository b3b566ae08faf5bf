import Foundation
import PosixLock
import TestSupport
import TestTraits
import Testing

/// Refusals and upstream failures are remembered for a short time: a campaign's devices asking
/// for one bad asset make one fetch from its origin, not one each.
@Suite("attachkit serve remembers refusals", .serialized, .threadOfItsOwn)
struct RefusalMemoTests {
  @Test(
    "three requests for a refused file (422) or a failing origin (502) make one upstream fetch; an own deadline is not remembered"
  )
  func threeRequestsOneFetch() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    // When each origin request arrived (the test's clock, the same wall clock serve's memo reads).
    let arrivals = Locked<[String: [Date]]>([:])
    let page = try Media.bytes("html-error-page.html")
    origin.route("/page.jpg") { request, writer in
      arrivals.withLock { $0[request.path, default: []].append(Date()) }
      writer.respond(status: 200, headers: [("Content-Type", "image/jpeg")], body: page)
    }
    origin.route("/down.jpg") { request, writer in
      arrivals.withLock { $0[request.path, default: []].append(Date()) }
      writer.respond(status: 500, headers: [("Content-Type", "text/plain")], body: Array("down".utf8))
    }
    let gif = try Media.bytes("gif-static.gif")
    let gate = Gate()
    origin.route("/held.gif") { _, writer in
      guard gate.wait(writer) else { return }
      writer.respond(status: 200, headers: [("Content-Type", "image/gif")], body: gif)
    }
    // Without retries: this counts origin requests, and a transient failure that a retry would
    // repeat (a loaded run once gave the 422 file two) is not what the memo is about.
    let serve = try await ServeProcess(workspace: workspace, ["--retries", "0"])
    defer { serve.stop() }
    var expected = 0
    for (path, status, code, lifetime) in [
      ("/page.jpg", 422, "unsupported_type", 30.0), ("/down.jpg", 502, "http_status", 5.0),
    ] {
      let url = serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile))
      let infoURL = serve.url(
        try await serve.signed(origin.url(path), keyFile: workspace.keyFile, route: "info"))
      // No window to hit: each answer's arrival is measured, and only what the memo must have
      // done by then is asserted. An answer received before `lifetime` after the first origin
      // request was checked against an entry still alive, so it cost no fetch; one received
      // later may have fetched again (a loaded machine), which then is still counted.
      var answeredInsideTheMemo = 0
      for round in 0..<4 {
        let answer = try await Curl.get(round == 3 ? infoURL : url)
        let received = Date()
        #expect(answer.status == status, "\(path) #\(round)")
        if round < 3 {
          #expect(answer.errorCode == code, "\(path) #\(round)")
          // The tier may keep it for what is left of the memo's entry.
          let cacheControl = answer.header("Cache-Control") ?? ""
          #expect(cacheControl.hasPrefix("public, max-age="), "\(path) #\(round): \(cacheControl)")
          #expect((1...Int(lifetime)).contains(CacheControlTests.seconds("max-age", in: cacheControl) ?? -1))
        } else {
          // The info route answers from the same memo, and no tier keeps it.
          #expect(answer.header("Cache-Control") == "no-store")
        }
        // serve's clock is coarse (CLOCK_REALTIME_COARSE, a few milliseconds behind): 50 ms off
        // the lifetime covers it.
        let first = try #require(arrivals.withLock { $0[path]?.first }, "\(path): no origin request")
        if round > 0, received < first.addingTimeInterval(lifetime - 0.05) { answeredInsideTheMemo += 1 }
      }
      let seen = arrivals.withLock { $0[path] ?? [] }
      #expect(
        seen.count <= 4 - answeredInsideTheMemo, "\(path): \(answeredInsideTheMemo) answered inside the memo")
      // However slow the machine, no fetch follows the one before it by less than the lifetime.
      for (earlier, later) in zip(seen, seen.dropFirst()) {
        #expect(
          later.timeIntervalSince(earlier) >= lifetime - 0.05, "\(path): fetched again while remembered")
      }
      expected += seen.count
    }
    #expect(try await serve.metric("attachkit_upstream_requests_total") == Double(expected))

    // An answer deadline of the request's own (X-Deadline-Ms) is no refusal: neither
    // remembered nor kept by a tier; the fetch it left goes on and is answered next time.
    let held = serve.url(try await serve.signed(origin.url("/held.gif"), keyFile: workspace.keyFile))
    let late = try await Curl.get(held, ["-H", "X-Deadline-Ms: 200"])
    #expect(late.status == 504)
    #expect(late.header("Cache-Control") == "no-store")
    gate.release()
    let file = try await Curl.get(held)
    #expect(file.status == 200)
    #expect(Array(file.body) == gif)
    #expect(origin.requestCount(path: "/held.gif") == 1)
  }
}
