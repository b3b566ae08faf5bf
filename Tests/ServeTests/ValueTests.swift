import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

@testable import AttachmentServer

/// The request rules as values: ranges, routes and status codes, no I/O.
@Suite("serve rules as values", .threadOfItsOwn)
struct ValueTests {
  @Test("Range headers resolve against the file size as RFC 9110 says")
  func ranges() {
    #expect(ByteRange(header: nil, size: 100) == .whole)
    #expect(ByteRange(header: "bytes=0-1", size: 100) == .partial(offset: 0, length: 2))
    #expect(ByteRange(header: "bytes=0-", size: 100) == .partial(offset: 0, length: 100))
    #expect(ByteRange(header: "bytes=90-200", size: 100) == .partial(offset: 90, length: 10))
    #expect(ByteRange(header: "bytes=-10", size: 100) == .partial(offset: 90, length: 10))
    #expect(ByteRange(header: "bytes=-1000", size: 100) == .partial(offset: 0, length: 100))
    #expect(ByteRange(header: "bytes=100-", size: 100) == .unsatisfiable)
    #expect(ByteRange(header: "bytes=-0", size: 100) == .unsatisfiable)
    // Syntax the server does not answer partially: the whole file.
    #expect(ByteRange(header: "bytes=5-1", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=0-1,5-6", size: 100) == .whole)
    #expect(ByteRange(header: "items=0-1", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=x-1", size: 100) == .whole)
    #expect(ByteRange(header: "bytes=99999999999999999999-", size: 100) == .whole)
  }

  @Test("paths map to routes; undecodable URLs are malformed, not found or guessed")
  func routes() {
    let url = "https://a.example/x.jpg"
    let encoded = "aHR0cHM6Ly9hLmV4YW1wbGUveC5qcGc"
    #expect(Route(target: "/healthz") == .health)
    #expect(Route(target: "/metrics") == .metrics)
    #expect(Route(target: "/v1/a/abc/\(encoded)") == .attachment(url: url, signature: "abc"))
    #expect(Route(target: "/v1/info/abc/\(encoded)") == .info(url: url, signature: "abc"))
    #expect(Route(target: "/v1/u/\(encoded)") == .attachment(url: url, signature: nil))
    #expect(Route(target: "/healthz/") == .notFound)
    #expect(Route(target: "/") == .notFound)
    #expect(Route(target: "") == .notFound)
    for bad in [
      "/v1/a/abc/\(encoded)=", "/v1/a/abc/", "/v1/a/abc", "/v1/b/abc/\(encoded)", "/v1/a/abc/\(encoded)/x",
    ] {
      if case .malformed = Route(target: bad) {} else { Issue.record("\(bad) is \(Route(target: bad))") }
    }
    // A URL with a space or a control character in it is refused, not passed on.
    let withSpace = Data("https://a.example/x y.jpg".utf8).base64EncodedString().replacingOccurrences(
      of: "=", with: "")
    if case .malformed = Route(target: "/v1/u/\(withSpace)") {} else { Issue.record("a space was accepted") }
    // A proxy path has one spelling: no query, no %-escape; other paths ignore a query.
    for bad in [
      "/v1/a/abc/\(encoded)?", "/v1/a/abc/\(encoded)?w=1", "/v1/a/abc/%61\(encoded.dropFirst())",
      "/v1/a/abc/\(encoded)%00", "/v1/u/\(encoded)%00",
    ] {
      if case .malformed = Route(target: bad) {} else { Issue.record("\(bad) is \(Route(target: bad))") }
    }
    #expect(Route(target: "/healthz?probe=1") == .health)
  }

  @Test("each stable code has its status, read from its kind")
  func statuses() {
    func status(_ code: AttachmentError.Code, kind: AttachmentError.Kind? = nil) -> Int {
      ErrorStatus.of(AttachmentError(code, "x", kind: kind))
    }
    #expect(status(.badSignature) == 403)
    #expect(status(.badEncryptedURL) == 403)
    #expect(status(.signatureExpired) == 410)
    #expect(status(.badRequest) == 400)
    #expect(status(.notFound) == 404)
    #expect(status(.methodNotAllowed) == 405)
    #expect(status(.invalidURL) == 400)
    #expect(status(.blockedAddress) == 403)
    #expect(status(.unsupportedType) == 422)
    #expect(status(.tooLarge) == 422)
    #expect(status(.tooLong) == 422)
    #expect(status(.httpStatus) == 502)
    // The origin refusing the URL's credentials is the caller's refusal (issue 52); any other
    // origin status is the upstream failing.
    for (origin, expected) in [(401, 403), (403, 403), (404, 502), (500, 502)] {
      #expect(ErrorStatus.of(AttachmentError(.httpStatus, "x", httpStatus: origin)) == expected, "\(origin)")
    }
    #expect(status(.headersTooLarge) == 502)
    // A cut transfer is the upstream failing; a file whose structure is cut short is refused.
    #expect(status(.truncated) == 502)
    #expect(status(.truncated, kind: .rejection) == 422)
    #expect(status(.deadlineExceeded) == 504)
    #expect(status(.overloaded) == 503)
    #expect(status(.ioError) == 500)
    #expect(status(.cancelled) == 500)
  }

  @Test("every code's kind is declared with it, and rejections are exactly the rejection kind")
  func kinds() {
    let rejections: [AttachmentError.Code] = [
      .unsupportedType, .unsupportedCodec, .tooLong, .unknownDuration, .tooManyPixels, .tooLarge, .empty,
    ]
    for code in rejections { #expect(AttachmentError(code, "x").isRejection, "\(code)") }
    for code: AttachmentError.Code in [.truncated, .httpStatus, .ioError, .badSignature, .invalidURL] {
      #expect(!AttachmentError(code, "x").isRejection, "\(code)")
    }
    #expect(AttachmentError(.truncated, "x", kind: .rejection).isRejection)
    for code: AttachmentError.Code in [.badSignature, .badRequest, .notFound, .methodNotAllowed, .overloaded]
    {
      #expect(code.kind == .proxy)
    }
  }

  @Test("If-None-Match lists, weak tags and * match; other tags do not")
  func entityTags() {
    let tag = "\"abc\""
    #expect(FileReply.matches("\"abc\"", etag: tag))
    #expect(FileReply.matches("W/\"abc\"", etag: tag))
    #expect(FileReply.matches("\"x\", \"abc\"", etag: tag))
    #expect(FileReply.matches("*", etag: tag))
    #expect(!FileReply.matches("\"abcd\"", etag: tag))
    #expect(!FileReply.matches("abc", etag: tag))
  }
}

/// Command-line mistakes exit 2 with a message, before anything listens.
@Suite("attachkit serve usage", .threadOfItsOwn)
struct ServeUsageTests {
  @Test("no key file, a bad key file, a bad --listen, a port in use: exit 2 with a message")
  func usageErrors() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let badKeys = workspace.path + "/bad"
    try writeTestFile("not hex\n", to: badKeys)
    let running = try await ServeProcess(workspace: workspace)
    defer { running.stop() }
    let cases: [([String], String)] = [
      (["serve"], "--key-file"),
      (["serve", "--key-file", badKeys], "not a hex key"),
      (["serve", "--key-file", workspace.keyFile, "--listen", "example.com:80"], "IPv4 or IPv6 literal"),
      (["serve", "--key-file", workspace.keyFile, "--listen", "127.0.0.1:99999"], "port"),
      (["serve", "--key-file", workspace.keyFile, "--listen", "127.0.0.1:\(running.port)"], "Cannot listen"),
      (["sign", "--key-file", badKeys, "https://a.example/x.jpg"], "not a hex key"),
    ]
    for (arguments, message) in cases {
      let cache = arguments[0] == "serve" ? ["--cache-dir", workspace.cache] : []
      let run = try await Run.process(Binaries.attachkit, arguments + cache)
      #expect(run.status == 2, "\(arguments)")
      #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }
  }
}
