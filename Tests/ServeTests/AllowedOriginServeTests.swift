import Foundation
import TestSupport
import TestTraits
import Testing

/// serve with `--allow-origin` (issue #37, item 4): a signed or unsigned URL outside the list,
/// or redirected out of it, is 403 `origin_not_allowed`, and the origin outside is never asked.
@Suite("serve: allowed origins", .threadOfItsOwn)
struct AllowedOriginServeTests {
  @Test("outside the list: 403 origin_not_allowed, for the URL, a redirect, and the unsigned route")
  func refusals() async throws {
    let allowed = try TestHTTPServer.start()
    defer { allowed.stop() }
    let other = try TestHTTPServer.start()
    defer { other.stop() }
    let gif = try Media.bytes("gif-static.gif")
    allowed.serve("/in.gif", body: gif, contentType: "image/gif")
    other.serve("/out.gif", body: gif, contentType: "image/gif")
    allowed.route("/bounce") { _, writer in
      _ = writer.respond(status: 302, headers: [("Location", other.url("/out.gif"))])
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(
      workspace: workspace, ["--allow-origin", allowed.baseURL + "/", "--unsigned"])
    defer { serve.stop() }
    #expect(
      try await Curl.get(
        serve.url(try await serve.signed(allowed.url("/in.gif"), keyFile: workspace.keyFile))
      ).status == 200)
    for url in [other.url("/out.gif"), allowed.url("/bounce")] {
      let answer = try await Curl.get(serve.url(try await serve.signed(url, keyFile: workspace.keyFile)))
      #expect(answer.status == 403, "\(url)")
      #expect(answer.errorCode == "origin_not_allowed", "\(url)")
    }
    let unsigned = Data(other.url("/out.gif").utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
    let answer = try await Curl.get(serve.url("/v1/u/" + unsigned))
    #expect(answer.status == 403 && answer.errorCode == "origin_not_allowed")
    #expect(other.totalConnections == 0)
  }

  @Test(
    "a copy cached while --allow-origin allowed it is 403 origin_not_allowed once serve runs with a list that does not"
  )
  func cachedCopyRefusedByANewList() async throws {
    // Given a fresh copy that serve cached while its list allowed the origin's /push/ prefix
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve(
      "/push/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif",
      headers: [("Cache-Control", "max-age=600")])
    let workspace = try Workspace()
    defer { workspace.remove() }
    let first = try await ServeProcess(workspace: workspace, ["--allow-origin", origin.url("/push/")])
    let path = try await first.signed(origin.url("/push/a.gif"), keyFile: workspace.keyFile)
    let fetched = try await Curl.get(first.url(path))
    #expect(fetched.status == 200)
    await first.terminate()

    // When serve runs over the same cache with lists that no longer allow it (another host;
    // another prefix of the same host), and the same signed path is asked for
    for list in ["media.example.com", origin.url("/other/")] {
      let serve = try await ServeProcess(workspace: workspace, ["--allow-origin", list])
      let answer = try await Curl.get(serve.url(path))
      await serve.terminate()

      // Then it is refused, not served from the cache
      #expect(answer.status == 403, "\(list)")
      #expect(answer.errorCode == "origin_not_allowed", "\(list)")
    }
    // and the origin was asked once, by the first serve
    #expect(origin.requestCount(path: "/push/a.gif") == 1)
    let again = try await ServeProcess(workspace: workspace, ["--allow-origin", origin.url("/push/")])
    defer { again.stop() }
    let hit = try await Curl.get(again.url(path))
    #expect(hit.status == 200 && hit.body == fetched.body)
    #expect(origin.requestCount(path: "/push/a.gif") == 1)
  }

  @Test("--origin-headers: the private origin answers serve, and neither answers nor the log show the value")
  func originHeaders() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let gif = try Media.bytes("gif-static.gif")
    origin.route("/p/a.gif") { request, writer in
      let allowed = request.header("Authorization") == "Bearer serve-secret-1"
      _ = writer.respond(
        status: allowed ? 200 : 401, headers: [("Content-Type", "image/gif")], body: allowed ? gif : [])
    }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let file = workspace.path + "/origin-headers"
    try writeTestFile("\(origin.url("/p/")) Authorization: Bearer serve-secret-1\n", to: file)
    #expect(chmod(file, 0o600) == 0)
    let serve = try await ServeProcess(workspace: workspace, ["--origin-headers", file])
    defer { serve.stop() }
    let path = try await serve.signed(origin.url("/p/a.gif"), keyFile: workspace.keyFile)
    let answer = try await Curl.get(serve.url(path))
    #expect(answer.status == 200)
    let info = try await Curl.get(
      serve.url(try await serve.signed(origin.url("/p/a.gif"), keyFile: workspace.keyFile, route: "info")))
    #expect(!String(decoding: info.body, as: UTF8.self).contains("serve-secret-1"))
    #expect(await eventually(within: 30) { serve.events.contains { $0["status"] as? Int == 200 } })
    #expect(
      !((try? String(contentsOfFile: serve.stderrPath, encoding: .utf8)) ?? "serve-secret-1").contains(
        "serve-secret-1"))
  }
}
