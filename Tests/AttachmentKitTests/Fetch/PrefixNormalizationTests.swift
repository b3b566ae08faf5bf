import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentKit

/// Allowed prefixes and origin-header scopes compared on the path as an origin reads it (issue
/// #52, item 2): `/pub/..%2fpriv/b.jpg` left an allowed `/pub/` and an origin that decodes, then
/// normalises, served `/priv/b.jpg`.
@Suite("Origin prefixes: paths as an origin reads them", .threadOfItsOwn)
struct PrefixNormalizationTests {
  static let base = "http://origin.example"

  /// Paths refused under `/pub/`, each one an origin could read as a path outside it (or, for the
  /// last ones, as another path than it looks).
  static let escapes = [
    "/priv/b.jpg", "/pub/../priv/b.jpg", "/pub/%2e%2e/priv/b.jpg", "/pub/%2E%2e/priv/b.jpg",
    // the review's two: an encoded slash after a dot segment
    "/pub/..%2fpriv/b.jpg", "/pub/%2e%2e%2fpriv/b.jpg", "/pub/..%2Fpriv/b.jpg",
    // a backslash, plain or encoded (IIS, some proxies read it as a slash)
    "/pub/..\\priv/b.jpg", "/pub/..%5cpriv/b.jpg", "/pub/..%5Cpriv/b.jpg",
    // double-encoded: an origin that decodes twice
    "/pub/..%252fpriv/b.jpg", "/pub/%252e%252e/priv/b.jpg", "/pub/%25252e%25252e%25252fpriv/b.jpg",
    "/pub/%2525/b.jpg",
    // path parameters: `..;/` is `../` to Tomcat and Jetty
    "/pub/..;/priv/b.jpg", "/pub;x/../priv/b.jpg", "/pub/a.jpg;.png",
    // a segment of dots only, a NUL
    "/pub/.../priv/b.jpg", "/pub/./a.jpg", "/pub/a.jpg%00.png",
  ]

  @Test(
    "under an allowed /pub/: every encoding of a way out is refused; unreserved escapes are read as their characters"
  )
  func allowlist() throws {
    let list = try OriginAllowlist([Self.base + "/pub/"])
    for path in Self.escapes {
      #expect(!list.allows(Self.base + path), "\(path)")
    }
    // As an origin reads them: `%70` is `p`, `%2D` is `-`; an empty segment is merged by the
    // origins that merge them, and stays under the prefix either way; other escapes stay.
    for path in [
      "/pub/a.jpg", "/%70ub/a.jpg", "/pu%62/a%2Db.jpg", "/pub//a.jpg", "/pub/a%20b.jpg", "/pub/100%25.jpg",
    ] {
      #expect(list.allows(Self.base + path), "\(path)")
    }
    // The prefix itself is read the same way, and one with a way out is no prefix.
    #expect(try OriginAllowlist([Self.base + "/%70ub/"]).allows(Self.base + "/pub/a.jpg"))
    #expect(throws: AttachmentError.self) { try OriginAllowlist([Self.base + "/pub/..%2fpriv/"]) }
    // A host entry has no path to escape: every path of the host is allowed.
    #expect(try OriginAllowlist(["origin.example"]).allows(Self.base + "/pub/..%2fpriv/b.jpg"))
  }

  @Test("a credential scoped to /priv/ never goes to a path that only looks under it")
  func headerScopes() throws {
    let headers = try OriginHeaders(fileText: "\(Self.base)/priv/ Authorization: Bearer secret\n")
    #expect(headers.lines(for: Self.base + "/priv/a.jpg") == ["Authorization: Bearer secret"])
    #expect(headers.lines(for: Self.base + "/%70riv/a.jpg") == ["Authorization: Bearer secret"])
    for path in [
      "/priv/..%2fpub/a.jpg", "/priv/%2e%2e/pub/a.jpg", "/priv/..;/pub/a.jpg", "/priv/..%252fpub/a.jpg",
    ] {
      #expect(headers.lines(for: Self.base + path).isEmpty, "\(path)")
    }
  }

  @Test(
    "against an origin that decodes then normalises its path: the escape is refused with no request, and through a redirect before it is followed"
  )
  func endToEnd() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let secret = try Samples.bytes("png-rgba.png")
    let public_ = try Samples.bytes("jpeg-baseline.jpg")
    // As nginx (and most origins) do: decode the path, remove its dot segments, then serve.
    origin.routePrefix("/") { request, writer in
      let path = Self.normalised(request.target)
      switch path {
      case "/priv/b.jpg":
        _ = writer.respond(status: 200, headers: [("Content-Type", "image/png")], body: secret)
      case "/pub/a.jpg":
        _ = writer.respond(status: 200, headers: [("Content-Type", "image/jpeg")], body: public_)
      case "/pub/redirect":
        _ = writer.respond(status: 302, headers: [("Location", "/pub/..%2fpriv/b.jpg")])
      default: _ = writer.respond(status: 404, headers: [], body: [])
      }
    }
    // The origin does serve the secret through the escape, to anyone who is let through.
    #expect(Self.normalised("/pub/..%2fpriv/b.jpg") == "/priv/b.jpg")
    let scratch = try ScratchDirectory("prefix-normalization")
    defer { scratch.remove() }
    var configuration = PipelineConfiguration(cacheDirectory: scratch.path + "/cache")
    configuration.downloader.allowPrivateNetworks = true
    configuration.downloader.allowedOrigins = try OriginAllowlist([origin.url("/pub/")])
    let pipeline = try AttachmentPipeline(configuration: configuration)

    #expect(
      try await pipeline.attachment(for: origin.url("/pub/a.jpg"), timeout: .seconds(20)).validation.type
        == .jpeg)
    for path in [
      "/pub/..%2fpriv/b.jpg", "/pub/%2e%2e%2fpriv/b.jpg", "/pub/..%252fpriv/b.jpg", "/pub/redirect",
    ] {
      do {
        let answer = try await pipeline.attachment(for: origin.url(path), timeout: .seconds(20))
        Issue.record("\(path) was delivered: \(answer.validation.type)")
      } catch {
        #expect(error.code == .originNotAllowed, "\(path): \(error)")
      }
    }
    // Only the good file and the redirect itself reached the origin.
    let asked = Set(origin.allRequests.map(\.target))
    #expect(asked == ["/pub/a.jpg", "/pub/redirect"], "\(asked)")
  }

  /// `target`'s path decoded (every escape, repeatedly, as an origin that decodes more than once
  /// would) with its dot segments removed (RFC 3986 §5.2.4).
  static func normalised(_ target: String) -> String {
    var path = String(target.prefix { $0 != "?" })
    while let decoded = path.removingPercentEncoding, decoded != path { path = decoded }
    var output: [Substring] = []
    for segment in path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
      switch segment {
      case ".": continue
      case "..": if !output.isEmpty { output.removeLast() }
      default: output.append(segment)
      }
    }
    return "/" + output.joined(separator: "/")
  }
}
