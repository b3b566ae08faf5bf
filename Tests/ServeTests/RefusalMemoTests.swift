import Foundation
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
    origin.serve("/page.jpg", body: try Media.bytes("html-error-page.html"), contentType: "image/jpeg")
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
    for (path, status, code, longest) in [
      ("/page.jpg", 422, "unsupported_type", 30), ("/status/500", 502, "http_status", 5),
    ] {
      let url = serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile))
      // The memo keeps an entry `longest` seconds from the first answer; a request sent after
      // that (a loaded parallel run can take that long for a few curls) may fetch again.
      var memoEnds = Date.distantFuture
      var sentAfterMemo = 0
      for round in 0..<3 {
        if Date() >= memoEnds { sentAfterMemo += 1 }
        let answer = try await Curl.get(url)
        if round == 0 { memoEnds = Date().addingTimeInterval(Double(longest) - 0.5) }
        #expect(answer.status == status, "\(path) #\(round)")
        #expect(answer.errorCode == code, "\(path) #\(round)")
        // The tier may keep it for what is left of the memo's entry.
        let cacheControl = answer.header("Cache-Control") ?? ""
        #expect(cacheControl.hasPrefix("public, max-age="), "\(path) #\(round): \(cacheControl)")
        #expect((1...longest).contains(CacheControlTests.seconds("max-age", in: cacheControl) ?? -1))
      }
      // The info route answers from the same memo.
      if Date() >= memoEnds { sentAfterMemo += 1 }
      let info = try await Curl.get(
        serve.url(try await serve.signed(origin.url(path), keyFile: workspace.keyFile, route: "info")))
      #expect(info.status == status)
      #expect(info.header("Cache-Control") == "no-store")
      let fetches = origin.requestCount(path: path)
      if sentAfterMemo == 0 {
        #expect(fetches == 1, "\(path)")
      } else {
        #expect((2...1 + sentAfterMemo).contains(fetches), "\(path): \(sentAfterMemo) sent after the memo")
      }
      expected += fetches
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
