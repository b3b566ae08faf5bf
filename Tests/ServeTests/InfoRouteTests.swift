import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentServer

/// `/v1/info` is for operators: its own signature, and nothing of the server's file system.
@Suite("attachkit serve: the info route", .serialized, .threadOfItsOwn)
struct InfoRouteTests {
  @Test("an attachment URL's signature does not open /v1/info, nor the reverse; the record names no path")
  func ownSignatureNoPath() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let file = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile)
    let info = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile, route: "info")
    #expect(try await Curl.get(serve.url(file)).status == 200)

    // A push URL's signature on the info route, and the info signature on the file route.
    let swapped = file.replacingOccurrences(of: "/v1/a/", with: "/v1/info/")
    let refused = try await Curl.get(serve.url(swapped))
    #expect(refused.status == 403)
    #expect(refused.errorCode == "bad_signature")
    #expect(
      try await Curl.get(serve.url(info.replacingOccurrences(of: "/v1/info/", with: "/v1/a/"))).status == 403)

    let record = try await Curl.get(serve.url(info))
    #expect(record.status == 200)
    #expect(record.json?["outcome"] as? String == "accepted")
    #expect(record.json?["path"] == nil)
    let text = String(decoding: record.body, as: UTF8.self)
    #expect(!text.contains(workspace.cache) && !text.contains(workspace.path))
  }

  @Test("a local error keeps its code and status but not its text, which can name cache paths")
  func localErrorText() {
    let local = AttachmentError(
      .ioError, "Cannot write /var/cache/attachkit/v3/tmp/x: No space left on device.")
    let reply = Reply.error(local)
    let body = reply.body
    guard case .bytes(let bytes) = body else {
      Issue.record("not a JSON body")
      return
    }
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(reply.status == 500)
    #expect(text.contains("\"io_error\""))
    #expect(!text.contains("/var/cache") && !text.contains("No space"))
    // Errors about the request or the origin keep their words.
    let refusal = AttachmentError(.unsupportedType, "It is an HTML page.", detected: "text/html")
    #expect(PublicError.exposed(refusal).message == refusal.message)
    #expect(PublicError.exposed(refusal).detected == "text/html")
  }
}
