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
}
